package supervise

import (
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFreePortIsToldBeforeItIsLetGo: the port is published while it is
// still held, so that a host that listens on an ephemeral port and gets it
// next (after it is let go) knows it is the worker's.
func TestFreePortIsToldBeforeItIsLetGo(t *testing.T) {
	var held error
	port, err := freePort(0, func(p int) {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err == nil {
			_ = ln.Close()
		}
		held = err
	})
	require.NoError(t, err)
	assert.NotZero(t, port)
	assert.Error(t, held, "the port was free when it was told")
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	require.NoError(t, err, "the port is let go once told")
	_ = ln.Close()
}

// TestFreePortAvoidsTheHostsPort: the kernel may give the port the host
// listens on, before the host took it; the worker never gets it.
func TestFreePortAvoidsTheHostsPort(t *testing.T) {
	first, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	second, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer func() { _ = second.Close() }()
	hostPort := first.Addr().(*net.TCPAddr).Port
	given := []net.Listener{first, second}
	var told []int
	port, err := freePortFrom(func() (net.Listener, error) {
		ln := given[0]
		given = given[1:]
		return ln, nil
	}, hostPort, func(p int) { told = append(told, p) })
	require.NoError(t, err)
	want := second.Addr().(*net.TCPAddr).Port
	assert.Equal(t, want, port)
	assert.Equal(t, []int{want}, told, "the host's port is never told")
}
