package host

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runUntilReady runs h until it serves; the host stops with the test.
func runUntilReady(t *testing.T, h *Host) {
	t.Helper()
	_, done := runHost(t, h)
	select {
	case <-h.Ready():
	case err := <-done:
		t.Fatalf("Run returned before ready: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("not ready")
	}
}

// TestDeferredSchemasCompileAfterTheFirstCalls: the schemas load left to
// compile wait past the start, so that the first calls of a client that
// calls as soon as the host is up do not share the CPU with them; calls
// meanwhile still check their output (a call compiles what it needs).
func TestDeferredSchemasCompileAfterTheFirstCalls(t *testing.T) {
	fw := newFakeWorker(t)
	root := weatherApp(t, `{"version":"2.0"}`)
	h, _ := newTestHost(t, root, fw.srv.URL, &Options{Addr: "127.0.0.1:0", compileDelay: time.Hour})
	deferred := h.cat.Deferred()
	require.Positive(t, deferred, "the weather app's schemas are left to compile")
	runUntilReady(t, h)

	time.Sleep(300 * time.Millisecond) // what compiling them at once took, many times over
	assert.Equal(t, deferred, h.cat.Deferred(), "compiled before the delay")
	base := strings.TrimSuffix(h.Endpoint(), MCPPath)
	status, body := rpc(t, base, "2025-06-18", callBody(1, "get_weather", `{"city":"Oslo"}`))
	require.Equal(t, http.StatusOK, status)
	assert.False(t, callResult(t, body).IsError, "%s", body)
	status, body = rpc(t, base, "2025-06-18", callBody(2, "bad_weather", `{"city":"Oslo"}`))
	require.Equal(t, http.StatusOK, status)
	assert.True(t, callResult(t, body).IsError, "output that breaks the schema: %s", body)
}

// TestDeferredSchemasCompileAfterTheDelay: once the delay is over, they are
// compiled, with no call asking.
func TestDeferredSchemasCompileAfterTheDelay(t *testing.T) {
	fw := newFakeWorker(t)
	root := weatherApp(t, `{"version":"2.0"}`)
	h, _ := newTestHost(t, root, fw.srv.URL, &Options{Addr: "127.0.0.1:0", compileDelay: 20 * time.Millisecond})
	require.Positive(t, h.cat.Deferred())
	runUntilReady(t, h)
	require.Eventually(t, func() bool { return h.cat.Deferred() == 0 }, 10*time.Second, 10*time.Millisecond)
}
