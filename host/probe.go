package host

import (
	"context"
	"io"
	"net/http"
	"time"
)

// prober checks that a running worker still answers GET / and kills it
// when it missed failures probes in a row; the supervisor then restarts it.
type prober struct {
	interval, timeout time.Duration
	failures          int
}

// run probes proc until ctx ends or proc exits.
func (p *prober) run(ctx context.Context, h *Host, proc *workerProcess) {
	client := &http.Client{Timeout: p.timeout, Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
	defer client.CloseIdleConnections()
	tick := time.NewTicker(p.interval)
	defer tick.Stop()
	missed := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-proc.exited:
			return
		case <-tick.C:
		}
		if p.answers(ctx, client, proc.url+"/") {
			missed = 0
			continue
		}
		if ctx.Err() != nil {
			return
		}
		missed++
		h.log.Warn("the worker did not answer its liveness probe", "pid", proc.pid(), "missed", missed, "of", p.failures)
		if missed >= p.failures {
			proc.killedByProbe.Store(true)
			proc.kill()
			return
		}
	}
}

// answers reports whether GET url got any HTTP answer in time.
func (p *prober) answers(ctx context.Context, client *http.Client, url string) bool {
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

// watch starts probing proc; unwatch stops it.
func (s *supervisor) watch(ctx context.Context, proc *workerProcess) {
	if s.probe == nil || s.probe.interval <= 0 {
		return
	}
	pctx, cancel := context.WithCancel(ctx)
	s.probeCancel = cancel
	go s.probe.run(pctx, s.h, proc)
}

func (s *supervisor) unwatch() {
	if s.probeCancel != nil {
		s.probeCancel()
		s.probeCancel = nil
	}
}
