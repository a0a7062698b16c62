package owner

import (
	"fmt"
	"sync"
)

// Limit bounds what a [Counter] counts: PerOwner for one owner, Global for
// all owners together. Zero or less means no bound.
type Limit struct {
	PerOwner int64
	Global   int64
}

// LimitError is the refusal of [Counter.Take]: which limit was reached.
type LimitError struct {
	What    string // what is counted, e.g. "running tasks"
	Setting string // the setting that changes the limit, if any
	Global  bool   // the global limit was reached, not the owner's
	Limit   int64
}

func (e *LimitError) Error() string {
	who := "for this client"
	if e.Global {
		who = "on this server"
	}
	msg := fmt.Sprintf("too many %s %s (the limit is %d)", e.What, who, e.Limit)
	if e.Setting != "" {
		msg += "; " + e.Setting + " changes it"
	}
	return msg
}

// Counter counts an amount (things or bytes) held per owner against a
// [Limit]. It is safe for concurrent use; an owner that holds nothing
// takes no memory.
type Counter struct {
	what, setting string
	limit         Limit
	mu            sync.Mutex
	held          map[ID]int64
	total         int64
}

// NewCounter returns a Counter of what (said in refusals), bounded by l;
// setting names the setting of the per-owner limit.
func NewCounter(what, setting string, l Limit) *Counter {
	return &Counter{what: what, setting: setting, limit: l, held: make(map[ID]int64)}
}

// Take counts n more for id, or refuses with a *LimitError when that would
// pass id's limit or the global one. release gives the n back; it may be
// called more than once, and only the first call counts.
func (c *Counter) Take(id ID, n int64) (release func(), err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.limit.PerOwner > 0 && c.held[id]+n > c.limit.PerOwner {
		return nil, &LimitError{What: c.what, Setting: c.setting, Limit: c.limit.PerOwner}
	}
	if c.limit.Global > 0 && c.total+n > c.limit.Global {
		return nil, &LimitError{What: c.what, Global: true, Limit: c.limit.Global}
	}
	c.held[id] += n
	c.total += n
	var once sync.Once
	return func() { once.Do(func() { c.give(id, n) }) }, nil
}

func (c *Counter) give(id ID, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held[id] -= n; c.held[id] <= 0 {
		delete(c.held, id)
	}
	c.total -= n
}

// Held returns what id holds now.
func (c *Counter) Held(id ID) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held[id]
}

// Total returns what all owners hold now.
func (c *Counter) Total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

// Owners returns how many owners hold something now.
func (c *Counter) Owners() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.held)
}
