package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// protocolVersion is the MCP revision every client here speaks.
const protocolVersion = "2025-11-25"

// weatherCall is the tools/call every tools/call benchmark sends: seven days
// from a fixed date, so every answer is the same ~900 B forecast.
const weatherCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Buenos Aires","units":"metric","days":7,"date":"2026-03-01"}}}`

// newClient is a keep-alive HTTP client with room for every concurrent caller.
func newClient() *http.Client {
	return &http.Client{
		Timeout: callTimeout,
		Transport: &http.Transport{
			Proxy:               nil,
			MaxIdleConns:        256,
			MaxIdleConnsPerHost: 128,
			DisableCompression:  true,
			IdleConnTimeout:     90 * time.Second,
		},
	}
}

// target is one server the benchmark calls, with what a call sends and how
// its answer is checked.
type target struct {
	name    string
	url     string
	body    []byte
	client  *http.Client
	headers []http.Header // per caller: session and protocol headers
	check   func(status int, body []byte) error
	pids    func() []int // the server processes whose CPU is counted
	// watchRSS samples the processes' resident memory while they run.
	watchRSS bool
}

// post sends one request and returns the status and body.
func post(ctx context.Context, client *http.Client, url string, body []byte, h http.Header) (int, []byte, http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, resp.Header, err
}

// checkToolResult accepts a 200 answer carrying a successful tool result
// with structuredContent, as JSON or as one SSE event.
func checkToolResult(status int, body []byte) error {
	if status != http.StatusOK {
		return fmt.Errorf("status %d: %s", status, abbreviate(body))
	}
	if !bytes.Contains(body, []byte(`"structuredContent":{`)) || bytes.Contains(body, []byte(`"isError":true`)) {
		return fmt.Errorf("not a successful structured result: %s", abbreviate(body))
	}
	return nil
}

func checkOK(status int, body []byte) error {
	if status != http.StatusOK {
		return fmt.Errorf("status %d: %s", status, abbreviate(body))
	}
	return nil
}

func abbreviate(b []byte) string {
	if len(b) > 300 {
		return string(b[:300]) + "…"
	}
	return string(b)
}

// mcpHeaders opens a session when the server hands one out (initialize,
// then notifications/initialized) and returns the headers later requests
// carry.
func mcpHeaders(client *http.Client, endpoint string) (http.Header, error) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	init := fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"bench","version":"1.0.0"}}}`, protocolVersion)
	status, body, hdr, err := post(ctx, client, endpoint, []byte(init), nil)
	if err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("initialize: status %d: %s", status, abbreviate(body))
	}
	h := http.Header{"Mcp-Protocol-Version": {protocolVersion}}
	if id := hdr.Get("Mcp-Session-Id"); id != "" {
		h.Set("Mcp-Session-Id", id)
	}
	status, body, _, err = post(ctx, client, endpoint, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`), h)
	if err != nil {
		return nil, fmt.Errorf("notifications/initialized: %w", err)
	}
	if status/100 != 2 {
		return nil, fmt.Errorf("notifications/initialized: status %d: %s", status, abbreviate(body))
	}
	return h, nil
}

// sessions gives each of n callers its own MCP session on endpoint.
func sessions(client *http.Client, endpoint string, n int) ([]http.Header, error) {
	hs := make([]http.Header, n)
	for i := range hs {
		h, err := mcpHeaders(client, endpoint)
		if err != nil {
			return nil, err
		}
		hs[i] = h
	}
	return hs, nil
}

// sample is what a target measured over the chunks it ran.
type sample struct {
	calls int
	wall  time.Duration
	cpu   time.Duration
	// switches are the context switches of the server's threads, every
	// process of its tree
	switches int64
	lat      []time.Duration
	rss      int64     // the largest resident set seen while it ran (bytes), when watched
	pss      int64     // the largest proportional set (smaps_rollup Pss) seen, when watched
	round    []*sample // the same, per interleaved round
}

// add folds r (one round) into s.
func (s *sample) add(r *sample) {
	s.calls += r.calls
	s.wall += r.wall
	s.cpu += r.cpu
	s.switches += r.switches
	s.lat = append(s.lat, r.lat...)
	s.rss = max(s.rss, r.rss)
	s.pss = max(s.pss, r.pss)
	s.round = append(s.round, r)
}

// rounds returns the per-round samples of every target, round by round,
// as maps like interleave's result.
func rounds(res map[string]*sample) []map[string]*sample {
	n := -1
	for _, s := range res {
		if n < 0 || len(s.round) < n {
			n = len(s.round)
		}
	}
	out := make([]map[string]*sample, max(n, 0))
	for i := range out {
		out[i] = make(map[string]*sample, len(res))
		for name, s := range res {
			out[i][name] = s.round[i]
		}
	}
	return out
}

// spread is the range of f over the rounds of res: "lo–hi (n rounds)".
func spread(res map[string]*sample, f func(map[string]*sample) float64) string {
	rs := rounds(res)
	return spreadOf(len(rs), func(i int) float64 { return f(rs[i]) })
}

// spreadOf is the range of f(0..n-1): "lo–hi (n rounds)", "" for none.
func spreadOf(n int, f func(int) float64) string {
	if n == 0 {
		return ""
	}
	lo, hi := f(0), f(0)
	for i := 1; i < n; i++ {
		v := f(i)
		lo, hi = min(lo, v), max(hi, v)
	}
	return fmt.Sprintf("%.3g–%.3g (%d rounds)", lo, hi, n)
}

func (s *sample) perSecond() float64 { return float64(s.calls) / s.wall.Seconds() }

func (s *sample) cpuPerCall() time.Duration { return s.cpu / time.Duration(max(s.calls, 1)) }

func (s *sample) switchesPerCall() float64 { return float64(s.switches) / float64(max(s.calls, 1)) }

// pct returns the p-th percentile (0 < p ≤ 100) of the latencies.
func (s *sample) pct(p float64) time.Duration {
	if len(s.lat) == 0 {
		return 0
	}
	slices.Sort(s.lat)
	i := int(float64(len(s.lat))*p/100+0.5) - 1
	return s.lat[min(max(i, 0), len(s.lat)-1)]
}

// run makes n calls to t from c closed-loop callers and adds them to s as
// one round.
func (t *target) run(c, n int, s *sample) error {
	var next atomic.Int64
	lat := make([][]time.Duration, c)
	errs := make([]error, c)
	pids := t.pids()
	r := &sample{}
	if t.watchRSS {
		stop := watchRSS(pids, &r.rss, &r.pss)
		defer stop()
	}
	cpu0, switches0 := cpuOf(pids), switchesOf(pids)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range c {
		wg.Go(func() {
			ctx := context.Background()
			for next.Add(1) <= int64(n) {
				t0 := time.Now()
				status, body, _, err := post(ctx, t.client, t.url, t.body, t.headers[w%len(t.headers)])
				d := time.Since(t0)
				if err == nil {
					err = t.check(status, body)
				}
				if err != nil {
					errs[w] = fmt.Errorf("%s: %w", t.name, err)
					return
				}
				lat[w] = append(lat[w], d)
			}
		})
	}
	wg.Wait()
	r.wall = time.Since(start)
	r.cpu = cpuOf(pids) - cpu0
	r.switches = switchesOf(pids) - switches0
	for _, l := range lat {
		r.lat = append(r.lat, l...)
		r.calls += len(l)
	}
	s.add(r)
	return errors.Join(errs...)
}

// watchRSS samples the summed resident set of pids every 5 ms into *peak,
// and their summed proportional set (a page shared by n of them counts 1/n
// in each: shared pages counted once) into *peakPSS, until stop is called.
func watchRSS(pids []int, peak, peakPSS *int64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	sampleOnce := func() {
		*peak = max(*peak, rssOf(pids))
		*peakPSS = max(*peakPSS, pssOf(pids))
	}
	wg.Go(func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			sampleOnce()
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		sampleOnce()
	}
}

// minRounds is how many interleaved rounds a run is cut into at least (when
// it has calls enough: a chunk is never smaller than the concurrency), for
// the spread of its ratios.
const minRounds = 6

// interleave runs n calls to every target from c callers, in chunks (of at
// most chunk calls, and at least minRounds of them) whose order rotates, so
// that every target sees the same machine load.
func interleave(targets []*target, c, n, chunk int) (map[string]*sample, error) {
	out := make(map[string]*sample, len(targets))
	for _, t := range targets {
		out[t.name] = &sample{}
	}
	// Warm up connections, sessions and caches: one chunk each, not counted.
	for _, t := range targets {
		if err := t.run(c, min(chunk, 4*c), &sample{}); err != nil {
			return nil, err
		}
	}
	round := 0
	chunk = max(min(chunk, (n+minRounds-1)/minRounds), c)
	for done := 0; done < n; done += chunk {
		m := min(chunk, n-done)
		for i := range targets {
			t := targets[(i+round)%len(targets)]
			if err := t.run(c, m, out[t.name]); err != nil {
				return nil, err
			}
		}
		round++
	}
	return out, nil
}

// listAll pages through tools/list and returns how many tools it saw and the
// time spent in round trips (request sent to answer fully read), leaving out
// the client's own decoding of the pages.
func listAll(ctx context.Context, client *http.Client, endpoint string, h http.Header) (int, time.Duration, int, error) {
	cursor := ""
	total, size := 0, 0
	var spent time.Duration
	for page := 0; page < 10000; page++ {
		params := `{}`
		if cursor != "" {
			params = fmt.Sprintf(`{"cursor":%q}`, cursor)
		}
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":3,"method":"tools/list","params":%s}`, params)
		t0 := time.Now()
		status, data, _, err := post(ctx, client, endpoint, []byte(body), h)
		spent += time.Since(t0)
		size += len(data)
		if err != nil {
			return 0, 0, 0, err
		}
		if status != http.StatusOK {
			return 0, 0, 0, fmt.Errorf("tools/list: status %d: %s", status, abbreviate(data))
		}
		var msg struct {
			Result struct {
				Tools      []json.RawMessage `json:"tools"`
				NextCursor string            `json:"nextCursor"`
			} `json:"result"`
		}
		if err := json.Unmarshal(jsonPayload(data), &msg); err != nil {
			return 0, 0, 0, fmt.Errorf("tools/list: %w: %s", err, abbreviate(data))
		}
		total += len(msg.Result.Tools)
		if msg.Result.NextCursor == "" {
			return total, spent, size, nil
		}
		cursor = msg.Result.NextCursor
	}
	return 0, 0, 0, errors.New("tools/list: too many pages")
}

// jsonPayload returns the JSON of an answer sent as JSON or as one SSE event
// (after any priming event with empty data).
func jsonPayload(data []byte) []byte {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '{' {
		return data
	}
	for line := range bytes.SplitSeq(data, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok && len(bytes.TrimSpace(rest)) > 0 {
			return bytes.TrimSpace(rest)
		}
	}
	return data
}

// getBytes GETs url and checks it answers want bytes.
func getBytes(ctx context.Context, client *http.Client, url string, want int) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err == nil && (resp.StatusCode != http.StatusOK || len(data) != want) {
		err = fmt.Errorf("GET %s: status %d, %d bytes", url, resp.StatusCode, len(data))
	}
	return len(data), err
}
