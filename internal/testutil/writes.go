package testutil

import (
	"strings"
	"sync"
)

// Writes is a writer safe for concurrent use that keeps what it is given
// and counts the writes it gets.
type Writes struct {
	mu sync.Mutex
	n  int
	sb strings.Builder
}

func (w *Writes) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.n++
	return w.sb.Write(p)
}

// State returns the number of writes so far and all they wrote.
func (w *Writes) State() (writes int, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.n, w.sb.String()
}
