package testutil

import (
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"
)

// FreePort returns a loopback port that was free a moment ago, for a
// process that must be told its port (a custom handler reads
// FUNCTIONS_CUSTOMHANDLER_PORT; Azurite restarts on the same port). Another
// process may take it before it is used: where a listener can be handed
// over or port 0 passed, do that instead, and where a test needs a port
// nothing listens on, or one it listens on later, use [ReservePort].
func FreePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("finding a free port: %v", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// ReservedPort is a loopback TCP port held by a socket that is bound but
// not listening: nobody else can take it, and a connection to it is
// refused until [ReservedPort.Listen]. It is released when the test ends.
type ReservedPort struct {
	Port int
	fd   int // the bound socket; -1 once Listen took it
}

// ReservePort binds a socket to a free loopback port without listening.
func ReservePort(t testing.TB) *ReservedPort {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatalf("reserving a port: %v", err)
	}
	// No SO_REUSEADDR: no other socket may bind the port while it is held.
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		_ = syscall.Close(fd)
		t.Fatalf("reserving a port: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		_ = syscall.Close(fd)
		t.Fatalf("reserving a port: %v", err)
	}
	r := &ReservedPort{Port: sa.(*syscall.SockaddrInet4).Port, fd: fd}
	t.Cleanup(func() {
		if r.fd >= 0 {
			_ = syscall.Close(r.fd)
		}
	})
	return r
}

// Addr is 127.0.0.1:<port>.
func (r *ReservedPort) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Port)) }

// URL is http://127.0.0.1:<port>.
func (r *ReservedPort) URL() string { return "http://" + r.Addr() }

// Listen starts listening on the port and returns the listener; the port
// is then the listener's (close it to release it).
func (r *ReservedPort) Listen(t testing.TB) net.Listener {
	t.Helper()
	if err := syscall.Listen(r.fd, syscall.SOMAXCONN); err != nil {
		t.Fatalf("listening on the reserved port %d: %v", r.Port, err)
	}
	f := os.NewFile(uintptr(r.fd), "reserved port") // f owns the descriptor now
	r.fd = -1
	ln, err := net.FileListener(f) // a duplicate of the socket
	_ = f.Close()
	if err != nil {
		t.Fatalf("listening on the reserved port %d: %v", r.Port, err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln
}
