//go:build race

package otelsetup

// raceEnabled: the race detector changes allocation counts, so the
// allocation tests run without it (make test's allocs step).
const raceEnabled = true
