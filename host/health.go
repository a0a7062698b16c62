package host

import (
	"sync/atomic"
)

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
}

func (h *Host) setHealthy() {
	if h.health.reason.Swap(nil) != nil {
		h.state.CompareAndSwap(StateUnhealthy, StateRunning)
	}
}
