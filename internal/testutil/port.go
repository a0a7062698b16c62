package testutil

import (
	"net"
	"testing"
)

// FreePort returns a loopback port that was free a moment ago, for a
// process that must be told its port (a custom handler reads
// FUNCTIONS_CUSTOMHANDLER_PORT; Azurite restarts on the same port). Another
// process may take it before it is used: where a listener can be handed
// over or port 0 passed, do that instead.
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
