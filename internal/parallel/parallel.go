// Package parallel runs independent pieces of work on every CPU.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For calls do(i) for every i in [0, n), on up to GOMAXPROCS goroutines, the
// caller's among them, and returns when every call has returned. With one
// CPU, or one piece, everything runs on the caller's goroutine. The calls
// must be safe to run at the same time; each writes its own result (say,
// out[i]), so results keep their order.
func For(n int, do func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			do(i)
		}
		return
	}
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1) - 1)
			if i >= n {
				return
			}
			do(i)
		}
	}
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}
