package host

import (
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/host/internal/supervise"
	"github.com/funcmcp/funcmcp/metadata"
)

// publishAnnounced passes a change the app announced on to the clients that
// listen: to the listeners' hub, or to changeSink when a test set one. It
// returns what the hub will say of the change's relay to the other
// instances (notify.Hub.PublishTracked); nil when there is no hub.
func (h *Host) publishAnnounced(c notify.Change) <-chan error {
	switch {
	case h.changeSink != nil:
		h.changeSink(c)
	case h.changes != nil:
		return h.changes.PublishTracked(c)
	}
	return nil
}

// workerValues are the settings the worker process gets: the app's Values,
// the telemetry switch (workerTelemetry) and the change channel. When the
// channel cannot be offered the worker gets the variables empty (set in
// funchost's own environment they would name another host's channel) and
// announces nothing.
func (h *Host) workerValues() []config.Setting {
	u, key := h.announced.Offer()
	return append(append(slices.Clone(h.cfg.Values), h.workerTelemetry()...),
		config.Setting{Key: metadata.EnvChangesURL, Value: u},
		config.Setting{Key: metadata.EnvChangesKey, Value: key})
}

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
