package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestShareCPUs(t *testing.T) {
	for _, tc := range []struct {
		env        string
		procs      int
		wantWorker int
		wantOwn    int
	}{
		{"", 1, 1, 1},
		{"", 2, 1, 1},
		{"", 3, 2, 2},
		{"", 8, 4, 4},
		{"6", 8, 0, 8}, // GOMAXPROCS set: the user's choice stands, for both
	} {
		own := tc.procs
		setProcs := func(n int) int {
			prev := own
			if n > 0 {
				own = n
			}
			return prev
		}
		getenv := func(name string) string {
			if name == "GOMAXPROCS" {
				return tc.env
			}
			return ""
		}
		assert.Equal(t, tc.wantWorker, shareCPUs(getenv, setProcs), "worker, %d CPUs, GOMAXPROCS=%q", tc.procs, tc.env)
		assert.Equal(t, tc.wantOwn, own, "funchost, %d CPUs, GOMAXPROCS=%q", tc.procs, tc.env)
	}
}
