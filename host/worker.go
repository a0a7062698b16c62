package host

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/supervise"
	"github.com/funcmcp/funcmcp/metadata"
)

// newSupervisor makes the supervisor of the worker host.json describes,
// reporting to the host.
func (h *Host) newSupervisor() *supervise.Supervisor {
	return supervise.New(&supervise.Options{
		Spec: supervise.Spec{Root: h.root, Worker: h.cfg.Worker, Values: h.workerValues(), Environ: h.opts.Environ,
			Hidden: auth.WorkerHidden, Procs: h.opts.WorkerProcs},
		Output:         h.console,
		Logger:         h.log,
		StartupTimeout: h.opts.StartupTimeout,
		StopTimeout:    h.opts.StopTimeout,
		RestartDelay:   h.restartDelay,
		Probe:          supervise.Probe{Interval: h.opts.ProbeInterval, Timeout: h.opts.ProbeTimeout, Failures: h.opts.ProbeFailures},
	}, workerEvents{h})
}

// inProcessWorker is the worker's base URL when it is a handler in this
// process (Options.WorkerHandler): the invoke client serves every call
// through the handler, and never dials it.
const inProcessWorker = "http://in-process.invalid"

// InProcessSettings returns what an app serving in this process
// (Options.WorkerHandler) reads from its environment, as "KEY=VALUE"
// entries, in two parts: values are the local.settings.json Values (but
// the host's keys, which a worker never gets), which the environment may
// override as it does the host's settings; own are the host's own, which
// it always sets: where to announce changes (the host's change channel,
// started now; none once the host is closed) and, with the host's
// telemetry off, OTEL_SDK_DISABLED=true, as funchost gives its worker.
// Package serve puts them in the process environment.
func (h *Host) InProcessSettings() (values, own []string) {
	for _, v := range h.cfg.Values {
		if !slices.Contains(auth.WorkerHidden, v.Key) {
			values = append(values, v.Key+"="+v.Value)
		}
	}
	for _, v := range h.workerTelemetry() {
		own = append(own, v.Key+"="+v.Value)
	}
	if u, key := h.announced.offer(); u != "" {
		own = append(own, metadata.EnvChangesURL+"="+u, metadata.EnvChangesKey+"="+key)
	}
	return values, own
}

// workerEvents is what the supervisor's reports do to the host: calls go
// to the ready worker, wait while it starts or restarts, fail at once while
// it is unhealthy; problems go to the status page.
type workerEvents struct{ h *Host }

func (e workerEvents) WorkerURL(url string)    { e.h.inv.SetWorker(url) }
func (e workerEvents) WorkerExited(url string) { e.h.inv.WorkerDown(url) }
func (e workerEvents) Unhealthy(reason string) { e.h.setUnhealthy(reason) }
func (e workerEvents) Healthy()                { e.h.setHealthy() }
func (e workerEvents) Problem(msg string)      { e.h.addLiveError(msg) }

// Restarted counts the restart in funcmcp.worker.restarts (telemetry on).
func (e workerEvents) Restarted(reason string) { e.h.tel.WorkerRestarted(reason) }

// health is the worker's state as calls and /admin/host/status see it.
type health struct {
	reason atomic.Pointer[string] // non-empty while unhealthy
}

// unhealthyReason returns why the worker is unhealthy, "" when it is not.
func (h *Host) unhealthyReason() string {
	if r := h.health.reason.Load(); r != nil {
		return *r
	}
	return ""
}

func (h *Host) setUnhealthy(reason string) {
	h.health.reason.Store(&reason)
	h.state.Store(StateUnhealthy)
	h.inv.Wake() // calls waiting for a worker fail now
}

func (h *Host) setHealthy() {
	if h.health.reason.Swap(nil) != nil {
		h.state.CompareAndSwap(StateUnhealthy, StateRunning)
	}
}

// console serializes writes of whole lines to the host's output: the
// host's own lines and the worker's.
type console struct {
	mu sync.Mutex
	w  io.Writer
}

func (c *console) printf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.w, format, args...)
}

// Write writes p (one whole line) at once.
func (c *console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.w.Write(p)
}
