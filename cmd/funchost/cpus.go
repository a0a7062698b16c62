package main

// shareCPUs splits the CPUs between funchost and its worker, so that the
// two Go runtimes together do not run more threads than there are CPUs.
// Each runtime, left to its default, takes every CPU: with two processes
// passing every call to each other, an idle P of one runtime spins and
// parks around each wake-up of the other, and at one call at a time this
// costs more CPU than the call itself (docs/performance.md, "Sharing the
// CPUs"). funchost keeps half of what its runtime would use, rounded up,
// and returns the same for the worker. When the environment sets
// GOMAXPROCS, the user has chosen: nothing changes and 0 is returned (the
// worker inherits the variable). getenv is os.Getenv; setProcs is
// runtime.GOMAXPROCS.
func shareCPUs(getenv func(string) string, setProcs func(int) int) int {
	if getenv("GOMAXPROCS") != "" {
		return 0
	}
	half := (setProcs(0) + 1) / 2
	setProcs(half)
	return half
}
