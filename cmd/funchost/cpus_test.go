package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestShareCPUs(t *testing.T) {
	for _, tc := range []struct {
		env         string
		procs       int
		worker, own int
	}{
		{"", 1, 1, 1},
		{"", 2, 1, 1},
		{"", 3, 2, 2},
		{"", 8, 4, 4},
		{"6", 8, 0, 0}, // GOMAXPROCS set: the user's choice stands, for both
	} {
		getenv := func(name string) string {
			if name == "GOMAXPROCS" {
				return tc.env
			}
			return ""
		}
		worker, own := shareCPUs(getenv, tc.procs)
		assert.Equal(t, tc.worker, worker, "worker, %d CPUs, GOMAXPROCS=%q", tc.procs, tc.env)
		assert.Equal(t, tc.own, own, "funchost, %d CPUs, GOMAXPROCS=%q", tc.procs, tc.env)
	}
}
