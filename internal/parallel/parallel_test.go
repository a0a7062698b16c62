package parallel

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestForEveryIndexOnce: each index is done exactly once, whatever the
// number of CPUs, and For returns only when all are done.
func TestForEveryIndexOnce(t *testing.T) {
	for _, procs := range []int{1, 2, 4} {
		prev := runtime.GOMAXPROCS(procs)
		for _, n := range []int{0, 1, 2, 3, 17, 1000} {
			counts := make([]atomic.Int32, n)
			For(n, func(i int) { counts[i].Add(1) })
			for i := range counts {
				assert.Equal(t, int32(1), counts[i].Load(), "procs %d, n %d, index %d", procs, n, i)
			}
		}
		runtime.GOMAXPROCS(prev)
	}
}

// TestForUsesTheCPUs: with several CPUs the pieces run at the same time
// (each of two pieces waits, bounded, for the other to start: done one
// after the other, neither would see the other); with one, on the caller's
// goroutine only.
func TestForUsesTheCPUs(t *testing.T) {
	prev := runtime.GOMAXPROCS(2)
	defer runtime.GOMAXPROCS(prev)
	started := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	var met [2]bool
	For(2, func(i int) {
		close(started[i])
		select {
		case <-started[1-i]:
			met[i] = true
		case <-time.After(10 * time.Second):
		}
	})
	assert.Equal(t, [2]bool{true, true}, met, "the two pieces ran at the same time")

	runtime.GOMAXPROCS(1)
	var order []int // appended without a lock: one goroutine only
	For(5, func(i int) { order = append(order, i) })
	assert.Equal(t, []int{0, 1, 2, 3, 4}, order)
}
