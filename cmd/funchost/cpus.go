package main

// shareCPUs splits the CPUs between funchost and its worker, so that the
// two Go runtimes together do not run more threads than there are CPUs.
// Each runtime, left to its default, takes every CPU: with two processes
// passing every call to each other, an idle P of one runtime spins and
// parks around each wake-up of the other, and at one call at a time this
// costs more CPU than the call itself (docs/performance.md, "Sharing the
// CPUs"). Each gets half of what funchost's runtime would use, rounded up:
// the worker from its start, funchost once it has loaded the app (loading
// thousands of functions goes faster on every CPU; the worker, which
// starts while the app loads, spends its start mostly on one). When the environment sets GOMAXPROCS, the user has chosen:
// both are 0, meaning leave it (the worker inherits the variable).
// getenv is os.Getenv, procs runtime.GOMAXPROCS(0).
func shareCPUs(getenv func(string) string, procs int) (worker, own int) {
	if getenv("GOMAXPROCS") != "" {
		return 0, 0
	}
	half := (procs + 1) / 2
	return half, half
}
