package supervise

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// watch starts probing w when the probe is on; the returned function stops
// it.
func (s *Supervisor) watch(ctx context.Context, w worker) (stop func()) {
	if s.o.Probe.Interval <= 0 {
		return func() {}
	}
	pctx, cancel := context.WithCancel(ctx)
	go s.o.Probe.run(pctx, s.log, w)
	return cancel
}

// run probes w until ctx ends or w exits, and kills w when it missed
// p.Failures probes in a row; the supervisor then restarts it.
func (p Probe) run(ctx context.Context, log *slog.Logger, w worker) {
	client := &http.Client{Timeout: p.Timeout, Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
	defer client.CloseIdleConnections()
	tick := time.NewTicker(p.Interval)
	defer tick.Stop()
	missed := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-w.exited():
			return
		case <-tick.C:
		}
		if answers(ctx, client, w.url()+"/") {
			missed = 0
			continue
		}
		if ctx.Err() != nil {
			return
		}
		missed++
		log.Warn("the worker did not answer its liveness probe", "pid", w.pid(), "missed", missed, "of", p.Failures)
		if missed >= p.Failures {
			w.killByProbe()
			return
		}
	}
}

// answers reports whether GET url got any HTTP answer in time.
func answers(ctx context.Context, client *http.Client, url string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	return true
}
