// Package bufpool keeps byte buffers for use again: the buffers a call
// writes and lets go of once written (a reply, an event of a stream), so
// that a busy server does not allocate one per call.
package bufpool

import "sync"

// Pool keeps buffers of at most Max bytes of capacity. The zero Pool keeps
// none (Max 0); it is safe for concurrent use.
type Pool struct {
	Max int
	p   sync.Pool
}

// Get returns an empty buffer that holds n bytes: a kept one when it is
// large enough, else a new one.
func (p *Pool) Get(n int) []byte {
	if b, ok := p.p.Get().(*[]byte); ok && cap(*b) >= n {
		return (*b)[:0]
	}
	return make([]byte, 0, n)
}

// Put keeps b for a later Get, unless it is larger than Max: nothing may
// use b after.
func (p *Pool) Put(b []byte) {
	if cap(b) > 0 && cap(b) <= p.Max {
		p.p.Put(&b)
	}
}
