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

// SSEEvent is one server-sent event; a comment line comes as Name ":".
type SSEEvent struct{ Name, Data string }

// SSEStream is an open legacy MCP SSE stream.
type SSEStream struct {
	// Events delivers the events in order; it is closed when the stream ends.
	Events chan SSEEvent
	// Endpoint is the message URL of the endpoint event, made absolute.
	Endpoint string
	cancel   context.CancelFunc
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
	s := &SSEStream{Events: make(chan SSEEvent, 4096), cancel: cancel}
	go func() {
		defer resp.Body.Close()
		defer close(s.Events)
		r := bufio.NewReader(resp.Body)
		var ev SSEEvent
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\r\n")
			switch {
			case line == "":
				if ev.Name != "" {
					s.Events <- ev
				}
				ev = SSEEvent{}
			case strings.HasPrefix(line, ":"):
				s.Events <- SSEEvent{Name: ":", Data: line}
			case strings.HasPrefix(line, "event: "):
				ev.Name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.Data += strings.TrimPrefix(line, "data: ")
			}
		}
	}()
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
