//go:build !race

package otel

const raceEnabled = false
