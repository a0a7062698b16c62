package owner

import (
	"fmt"
	"sync"
)

// BudgetLimit bounds what a [Budget] counts three ways: for one owner, for
// one client address (every owner of that address together) and for all.
// Zero or less means no bound.
type BudgetLimit struct {
	PerOwner, PerAddress, Global int64
}

// BudgetScope says which limit of a [Budget] refused.
type BudgetScope int

// The limits of a [Budget].
const (
	ScopeOwner BudgetScope = iota
	ScopeAddress
	ScopeGlobal
)

// BudgetError is the refusal of [Budget.Take]: which limit was reached.
type BudgetError struct {
	What    string // what is counted, e.g. "bytes of resource subscriptions"
	Scope   BudgetScope
	Limit   int64
	Setting string // what changes the limit, "" when nothing names it
}

func (e *BudgetError) Error() string {
	who := "for this client"
	switch e.Scope {
	case ScopeAddress:
		who = "from this client address"
	case ScopeGlobal:
		who = "on this server"
	}
	msg := fmt.Sprintf("too many %s %s (the limit is %d)", e.What, who, e.Limit)
	if e.Setting != "" {
		msg += "; " + e.Setting + " changes it"
	}
	return msg
}

// Budget counts an amount (things or bytes) that clients make the server
// keep, against a [BudgetLimit]. Every owner nests within the address it
// came from: what an owner takes counts for its address too, so a client
// that makes up owners (a fresh credential a request, verified or not) is
// still bounded by its address, and everyone by the global limit. It is
// safe for concurrent use; an owner or address holding nothing takes no
// memory.
type Budget struct {
	what     string
	limit    BudgetLimit
	settings [3]string

	mu     sync.Mutex
	owners map[ID]int64
	addrs  map[ID]int64
	total  int64
}

// NewBudget returns a Budget of what (said in refusals) bounded by l;
// settings name what changes the per-owner, the per-address and the global
// limit, in that order (missing or "": nothing named).
func NewBudget(what string, l BudgetLimit, settings ...string) *Budget {
	b := &Budget{what: what, limit: l, owners: map[ID]int64{}, addrs: map[ID]int64{}}
	copy(b.settings[:], settings)
	return b
}

// Limit returns the budget's limits.
func (b *Budget) Limit() BudgetLimit { return b.limit }

// Take counts n more for owner o of address addr, or refuses with a
// *BudgetError when that would pass o's limit, addr's or the global one
// (nothing is counted then). An empty addr is counted as o's own.
func (b *Budget) Take(o, addr ID, n int64) error {
	if addr == "" {
		addr = o
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.limit.PerOwner > 0 && b.owners[o]+n > b.limit.PerOwner:
		return b.refusal(ScopeOwner, b.limit.PerOwner)
	case b.limit.PerAddress > 0 && b.addrs[addr]+n > b.limit.PerAddress:
		return b.refusal(ScopeAddress, b.limit.PerAddress)
	case b.limit.Global > 0 && b.total+n > b.limit.Global:
		return b.refusal(ScopeGlobal, b.limit.Global)
	}
	b.owners[o] += n
	b.addrs[addr] += n
	b.total += n
	return nil
}

func (b *Budget) refusal(s BudgetScope, limit int64) error {
	return &BudgetError{What: b.what, Scope: s, Limit: limit, Setting: b.settings[s]}
}

// Give gives back n that [Budget.Take] counted for o of addr.
func (b *Budget) Give(o, addr ID, n int64) {
	if n == 0 {
		return
	}
	if addr == "" {
		addr = o
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	give(b.owners, o, n)
	give(b.addrs, addr, n)
	b.total -= n
}

func give(m map[ID]int64, id ID, n int64) {
	if m[id] -= n; m[id] <= 0 {
		delete(m, id)
	}
}

// Held returns what owner o holds now.
func (b *Budget) Held(o ID) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.owners[o]
}

// HeldFrom returns what the owners of address addr hold now.
func (b *Budget) HeldFrom(addr ID) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.addrs[addr]
}

// ownerCount returns how many owners hold something now.
func (b *Budget) ownerCount() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.owners)
}

// Total returns what all owners hold now.
func (b *Budget) Total() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}
