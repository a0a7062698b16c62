package testutil

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// SSEEvent is one server-sent event; a comment line comes as Name ":". An
// event without an event line is named "message", as SSE says.
type SSEEvent struct{ Name, Data, ID, Retry string }

// SSEStream is an open SSE stream: a legacy MCP stream (OpenSSE) or the
// response stream of a request (ReadSSE).
type SSEStream struct {
	// Events delivers the events in order; it is closed when the stream ends.
	Events chan SSEEvent
	// Endpoint is the message URL of the endpoint event, made absolute
	// (OpenSSE only).
	Endpoint string
	cancel   context.CancelFunc
}

// ReadSSE reads the events of resp's body in the background until the body
// ends or cancel is called (cancel should end resp's request).
func ReadSSE(resp *http.Response, cancel context.CancelFunc) *SSEStream {
	s := &SSEStream{Events: make(chan SSEEvent, 4096), cancel: cancel}
	go func() {
		defer resp.Body.Close()
		defer close(s.Events)
		r := bufio.NewReader(resp.Body)
		var ev SSEEvent
		var has bool
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\r\n")
			switch {
			case line == "":
				if has {
					if ev.Name == "" {
						ev.Name = "message"
					}
					s.Events <- ev
				}
				ev, has = SSEEvent{}, false
			case strings.HasPrefix(line, ":"):
				s.Events <- SSEEvent{Name: ":", Data: line}
			case strings.HasPrefix(line, "event:"):
				ev.Name, has = strings.TrimSpace(strings.TrimPrefix(line, "event:")), true
			case strings.HasPrefix(line, "data:"):
				ev.Data, has = ev.Data+strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "), true
			case strings.HasPrefix(line, "id:"):
				ev.ID, has = strings.TrimSpace(strings.TrimPrefix(line, "id:")), true
			case strings.HasPrefix(line, "retry:"):
				ev.Retry, has = strings.TrimSpace(strings.TrimPrefix(line, "retry:")), true
			}
		}
	}()
	return s
}

// OpenSSE GETs sseURL (with the headers given), reads the endpoint event and
// keeps reading events in the background until Close or ctx is done.
func OpenSSE(ctx context.Context, sseURL string, hdr http.Header) (*SSEStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, sseURL, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return nil, fmt.Errorf("GET %s: %s", sseURL, resp.Status)
	}
	s := ReadSSE(resp, cancel)
	first, err := s.Next(10 * time.Second)
	if err != nil {
		s.Close()
		return nil, err
	}
	if first.Name != "endpoint" {
		s.Close()
		return nil, fmt.Errorf("the first event is %q, want endpoint", first.Name)
	}
	ref, err := url.Parse(first.Data)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.Endpoint = resp.Request.URL.ResolveReference(ref).String()
	return s, nil
}

// Next returns the next event that is not a comment, waiting at most within.
func (s *SSEStream) Next(within time.Duration) (SSEEvent, error) {
	t := time.NewTimer(within)
	defer t.Stop()
	for {
		select {
		case ev, ok := <-s.Events:
			if !ok {
				return SSEEvent{}, fmt.Errorf("the stream ended")
			}
			if ev.Name != ":" {
				return ev, nil
			}
		case <-t.C:
			return SSEEvent{}, fmt.Errorf("no event within %s", within)
		}
	}
}

// Close leaves the stream.
func (s *SSEStream) Close() { s.cancel() }

// OnHost returns a URL with its host:port replaced by that of base.
func OnHost(rawURL, base string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return rawURL
	}
	b, err := url.Parse(base)
	if err != nil {
		return rawURL
	}
	u.Host = b.Host
	return u.String()
}
