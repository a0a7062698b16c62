package clientreq

import (
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// waitingGoroutines is how many goroutines of g wait for work.
func waitingGoroutines(g *Goroutines) int { return int(g.idle.Load()) }

func TestGoroutinesRunEachFunctionOnAWaitingGoroutine(t *testing.T) {
	g := NewGoroutines(time.Minute)
	done := make(chan int, 3)
	g.Go(func() { done <- 1 })
	require.Equal(t, 1, <-done)
	require.Eventually(t, func() bool { return waitingGoroutines(g) == 1 }, 5*time.Second, time.Millisecond)
	before := runtime.NumGoroutine()
	g.Go(func() { done <- 2 })
	require.Equal(t, 2, <-done)
	require.Eventually(t, func() bool { return waitingGoroutines(g) == 1 }, 5*time.Second, time.Millisecond)
	require.Equal(t, before, runtime.NumGoroutine(), "the second function ran on the waiting goroutine")
}

func TestGoroutinesRunConcurrentFunctionsAtOnce(t *testing.T) {
	g := NewGoroutines(time.Minute)
	var started, release sync.WaitGroup
	release.Add(1)
	for range 4 {
		started.Add(1)
		g.Go(func() { started.Done(); release.Wait() })
	}
	started.Wait() // would block forever if a function waited for another
	release.Done()
	require.Eventually(t, func() bool { return waitingGoroutines(g) == 4 }, 5*time.Second, time.Millisecond)
}

func TestGoroutinesEndWhenIdle(t *testing.T) {
	g := NewGoroutines(20 * time.Millisecond)
	done := make(chan struct{})
	g.Go(func() { close(done) })
	<-done
	require.Eventually(t, func() bool { return waitingGoroutines(g) == 0 }, 5*time.Second, time.Millisecond)
	ran := make(chan struct{})
	g.Go(func() { close(ran) }) // no goroutine waits: a new one runs it
	<-ran
}

func TestGoroutinesKeepAtMostMaxWaiting(t *testing.T) {
	g := NewGoroutines(time.Minute)
	var started, release sync.WaitGroup
	release.Add(1)
	for range MaxWaitingGoroutines + 3 {
		started.Add(1)
		g.Go(func() { started.Done(); release.Wait() })
	}
	started.Wait()
	release.Done()
	require.Eventually(t, func() bool { return waitingGoroutines(g) == MaxWaitingGoroutines }, 5*time.Second, time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	require.Equal(t, MaxWaitingGoroutines, waitingGoroutines(g))
}
