package owner

import (
	"errors"
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
// [Limit]: a [Budget] with no per-address bound, whose refusals are
// *LimitError. It is safe for concurrent use; an owner that holds nothing
// takes no memory.
type Counter struct {
	b *Budget
}

// NewCounter returns a Counter of what (said in refusals), bounded by l;
// setting names the setting of the per-owner limit.
func NewCounter(what, setting string, l Limit) *Counter {
	return &Counter{b: NewBudget(what, BudgetLimit{PerOwner: l.PerOwner, Global: l.Global}, setting)}
}

// Take counts n more for id, or refuses with a *LimitError when that would
// pass id's limit or the global one. release gives the n back; it may be
// called more than once, and only the first call counts.
func (c *Counter) Take(id ID, n int64) (release func(), err error) {
	if err := c.b.Take(id, id, n); err != nil {
		var be *BudgetError
		if !errors.As(err, &be) {
			return nil, err
		}
		return nil, &LimitError{What: be.What, Setting: be.Setting, Global: be.Scope == ScopeGlobal, Limit: be.Limit}
	}
	var once sync.Once
	return func() { once.Do(func() { c.b.Give(id, id, n) }) }, nil
}

// Held returns what id holds now.
func (c *Counter) Held(id ID) int64 { return c.b.Held(id) }

// Total returns what all owners hold now.
func (c *Counter) Total() int64 { return c.b.Total() }

// Owners returns how many owners hold something now.
func (c *Counter) Owners() int { return c.b.ownerCount() }
