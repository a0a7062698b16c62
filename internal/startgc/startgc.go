// Package startgc holds the garbage collector off while a program starts.
//
// A funcmcp process allocates most of its garbage before it serves: the
// schema library compiles its metaschemas in its package init, the app
// declares its tools, the host reads and checks every definition. With a
// live heap of one or two MiB the collector, at Go's 4 MiB minimum goal,
// runs several cycles in those few milliseconds, on the path to the first
// answered call. This package's init (it has no dependency that is not in
// the standard library, so it runs before the inits of the packages that
// allocate) turns the collector off, bounded by a memory limit, until the
// first of:
//
//   - [Release], which funchost, the one process and the worker call a
//     little after they serve (after the first calls, which then run with
//     no collection either);
//   - the first collection, which the memory limit starts if the start
//     allocates more than [Limit] (an app with thousands of tools): the
//     settings are given back at once, and the rest of the start collects
//     as before;
//   - [MaxHold] after the init, for a program that never calls Release.
//
// Release gives back the settings the program started with and runs a
// collection, returning the start's garbage to the system, so the memory of
// the process serving is what it was with the collector on.
//
// A process started with GOGC or GOMEMLIMIT set keeps exactly what it was
// told: nothing is held.
package startgc

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
	"time"
)

const (
	// Limit bounds the memory of a start with the collector held off:
	// reaching it runs a collection, which ends the hold.
	Limit = 32 << 20
	// MaxHold ends a hold that nothing released.
	MaxHold = time.Second
)

// holdFor is MaxHold, shorter in tests.
var holdFor = MaxHold

var (
	mu          sync.Mutex
	held        bool
	prevPercent int
	prevLimit   int64
	timer       *time.Timer
)

func init() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	hold()
}

// hold turns the collector off, bounded by Limit, until Release, the first
// collection or MaxHold.
func hold() {
	mu.Lock()
	defer mu.Unlock()
	if held {
		return
	}
	held = true
	prevPercent = debug.SetGCPercent(-1)
	prevLimit = debug.SetMemoryLimit(Limit)
	// The sentinel is unreachable from here on: the first collection, which
	// only the limit can start now, queues its cleanup. It is larger than
	// the tiny allocator's 16 bytes, whose blocks may keep a cleanup from
	// running.
	runtime.AddCleanup(new([32]byte), func(struct{}) { release(false) }, struct{}{})
	timer = time.AfterFunc(holdFor, Release)
}

// Held reports whether the collector is held off.
func Held() bool {
	mu.Lock()
	defer mu.Unlock()
	return held
}

// Release ends the hold, if there is one: the collector gets back the
// settings the program started with (a percent or limit the program set
// itself meanwhile stays), and a collection returns the start's garbage to
// the system. Release is safe to call more than once, and from
// any goroutine.
func Release() { release(true) }

func release(collect bool) {
	mu.Lock()
	if !held {
		mu.Unlock()
		return
	}
	held = false
	timer.Stop()
	// A program that set its own percent or limit meanwhile keeps it.
	if cur := debug.SetGCPercent(prevPercent); cur != -1 {
		debug.SetGCPercent(cur)
	}
	if debug.SetMemoryLimit(-1) == Limit {
		debug.SetMemoryLimit(prevLimit)
	}
	mu.Unlock()
	if collect {
		debug.FreeOSMemory()
	}
}
