package clientreq

import (
	"sync/atomic"
	"time"
)

// Goroutines runs functions on goroutines it keeps: a call that outlives
// its request (a resumable stream's call) runs on one that ran calls
// before, whose stack has grown to a call's depth already, where a new
// goroutine starts with a small stack and copies it several times as the
// call deepens (7% of a one-process server's CPU at one caller). At most
// MaxWaitingGoroutines wait for work, each for a while only.
type Goroutines struct {
	work     chan func()
	idle     atomic.Int32 // goroutines waiting for work
	idleTime time.Duration
}

// IdleGoroutine is how long a goroutine of Goroutines waits for work
// before it ends, when NewGoroutines is given 0.
const IdleGoroutine = time.Second

// MaxWaitingGoroutines is how many goroutines of a Goroutines may wait for
// work; one more ends once its function returns.
const MaxWaitingGoroutines = 16

// NewGoroutines returns a Goroutines with no goroutine yet, whose
// goroutines end after idle without work (0: IdleGoroutine).
func NewGoroutines(idle time.Duration) *Goroutines {
	if idle <= 0 {
		idle = IdleGoroutine
	}
	return &Goroutines{work: make(chan func()), idleTime: idle}
}

// Go runs f on a waiting goroutine, or on a new one when none waits. f
// recovers its own panics.
func (g *Goroutines) Go(f func()) {
	if g.idle.Load() > 0 {
		select {
		case g.work <- f:
			return
		default: // the waiting one just ended, or took other work
		}
	}
	go g.loop(f)
}

// loop runs f, then whatever work comes within g.idleTime of the last.
func (g *Goroutines) loop(f func()) {
	t := time.NewTimer(g.idleTime)
	defer t.Stop()
	for {
		f()
		f = nil // nothing of the last call stays reachable while waiting
		if g.idle.Add(1) > MaxWaitingGoroutines {
			g.idle.Add(-1)
			return
		}
		t.Reset(g.idleTime)
		select {
		case f = <-g.work:
			g.idle.Add(-1)
		case <-t.C:
			g.idle.Add(-1)
			return
		}
	}
}
