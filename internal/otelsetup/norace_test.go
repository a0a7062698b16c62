//go:build !race

package otelsetup

const raceEnabled = false
