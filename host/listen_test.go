package host

import (
	"errors"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListenAvoidsTheWorkersPort: on an ephemeral address the kernel may
// give the host the port its worker was given and has not taken yet; the
// host lets it go and listens again, or its own server would answer the
// worker's readiness probe and calls (seen: 1 cold start in about 2,500
// answered a tools/call with the host's own 404).
func TestListenAvoidsTheWorkersPort(t *testing.T) {
	var given []net.Listener
	for range 2 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		given = append(given, ln)
	}
	defer func() { _ = given[1].Close() }()
	workerPort := listenerPort(given[0])
	next := 0
	ln, err := listenAvoiding(func() (net.Listener, error) {
		next++
		return given[next-1], nil
	}, func() int { return workerPort })
	require.NoError(t, err)
	assert.Equal(t, listenerPort(given[1]), listenerPort(ln))
	again, err := net.Listen("tcp", given[0].Addr().String())
	require.NoError(t, err, "the worker's port is let go for the worker")
	_ = again.Close()

	_, err = listenAvoiding(func() (net.Listener, error) { return nil, errors.New("refused") }, func() int { return 0 })
	assert.EqualError(t, err, "refused")
}

// TestAddrPort: the host's own port, which its worker is never given.
func TestAddrPort(t *testing.T) {
	for addr, want := range map[string]int{"127.0.0.1:7071": 7071, "127.0.0.1:0": 0, ":8080": 8080, "localhost": 0, "[::1]:x": 0} {
		assert.Equal(t, want, addrPort(addr), addr)
	}
}
