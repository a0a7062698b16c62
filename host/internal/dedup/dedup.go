// Package dedup remembers the last ids seen, to drop a message that comes
// twice: a queue message delivered again after its visibility timeout, or a
// JSON-RPC request a client sent again after an ambiguous failure.
package dedup

import "sync"

// Window remembers the last n ids added. It is safe for concurrent use.
type Window struct {
	mu   sync.Mutex
	ids  map[string]struct{}
	ring []string
	next int
}

// NewWindow returns a Window of n ids (at least 1).
func NewWindow(n int) *Window {
	n = max(n, 1)
	return &Window{ids: make(map[string]struct{}, n), ring: make([]string, n)}
}

// Add records id and reports whether it was new. When the window is full
// the oldest id is forgotten.
func (w *Window) Add(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.ids[id]; ok {
		return false
	}
	if old := w.ring[w.next]; old != "" {
		delete(w.ids, old)
	}
	w.ring[w.next] = id
	w.next = (w.next + 1) % len(w.ring)
	w.ids[id] = struct{}{}
	return true
}
