//go:build !linux

package reaper

// Arg0 is the argv[0] of the reaper mode, which exists on Linux only.
const Arg0 = "funcmcp-worker-reaper"
