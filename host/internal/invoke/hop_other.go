//go:build !unix

package invoke

import "net"

// stillOpen cannot peek at a socket here without blocking, so an idle
// connection is never reused: each invocation dials its own (correct, a
// little slower; Linux and macOS reuse connections).
func stillOpen(net.Conn) bool { return false }
