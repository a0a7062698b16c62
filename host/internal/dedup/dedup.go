// Package dedup remembers the last ids seen, to drop a message that comes
// twice: a queue message delivered again after its visibility timeout, or a
// JSON-RPC request a client sent again after an ambiguous failure.
package dedup

import "sync"

// Window remembers the last n ids added. It is safe for concurrent use. It
// grows as ids come: an empty window holds nothing but its size.
type Window struct {
	mu   sync.Mutex
	size int
	ids  map[string]struct{}
	ring []string // the ids in the order added; a ring once size long
	next int
}

// NewWindow returns a Window of n ids (at least 1).
func NewWindow(n int) *Window {
	return &Window{size: max(n, 1)}
}

// Add records id and reports whether it was new. When the window is full
// the oldest id is forgotten.
func (w *Window) Add(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, ok := w.ids[id]; ok {
		return false
	}
	if w.ids == nil {
		w.ids = make(map[string]struct{})
	}
	if len(w.ring) < w.size {
		w.ring = append(w.ring, id)
	} else {
		delete(w.ids, w.ring[w.next])
		w.ring[w.next] = id
		w.next = (w.next + 1) % w.size
	}
	w.ids[id] = struct{}{}
	return true
}

// Contains reports whether id is in the window, without adding it.
func (w *Window) Contains(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.ids[id]
	return ok
}
