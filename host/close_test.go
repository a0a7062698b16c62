package host

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/metadata"
)

// TestCloseStopsWhatTheHandlerStarted: a Host used only through Handler
// (it never runs) starts the worker notification listener on first use;
// Close stops it, ends the legacy SSE streams, and can be called again.
func TestCloseStopsWhatTheHandlerStarted(t *testing.T) {
	h, srv, nw := notifyHost(t)
	var target atomic.Pointer[string]
	nw.script = func(_ testing.TB, offer http.Header) {
		u := offer.Get(metadata.HeaderNotifyURL)
		target.Store(&u)
	}
	events := callStream(t, srv, `,"_meta":{"progressToken":"p"}`, nil)
	require.Len(t, events, 1)
	require.NotNil(t, target.Load())
	require.NotEmpty(t, *target.Load(), "the call was offered a channel: the listener runs")

	st, err := testutil.OpenSSE(t.Context(), srv.URL+SSEPath, nil)
	require.NoError(t, err)
	defer st.Close()

	require.NoError(t, h.Close())
	_, err = http.Post(*target.Load(), "application/json", strings.NewReader(`{}`))
	assert.True(t, errors.Is(err, syscall.ECONNREFUSED), "the notification listener is closed: %v", err)
	ended := false
	for !ended {
		select {
		case _, ok := <-st.Events:
			ended = !ok
		case <-time.After(10 * time.Second):
			t.Fatal("the legacy SSE stream did not end on Close")
		}
	}
	assert.NoError(t, h.Close(), "a second Close")
	assert.EqualError(t, h.Run(context.Background()), "running the host: it is closed")
}

// TestStatusRunAndCloseAreRaceFree reads the status while the host starts,
// serves, stops and is closed (twice, at once): under the race detector any
// unguarded state fails the test.
func TestStatusRunAndCloseAreRaceFree(t *testing.T) {
	fw := newFakeWorker(t)
	root := weatherApp(t, `{"version":"2.0"}`)
	h, _ := newTestHost(t, root, fw.srv.URL, &Options{Addr: "127.0.0.1:0"})
	handler := h.Handler()
	stop := make(chan struct{})
	var readers sync.WaitGroup
	var seen sync.Map // states observed
	for range 4 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				seen.Store(h.Status().State, true)
				_ = h.Endpoint()
				req := httptest.NewRequest(http.MethodGet, StatusPath, nil)
				req.Host = "127.0.0.1"
				rec := httptest.NewRecorder()
				handler.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK {
					t.Errorf("status endpoint: %d", rec.Code)
					return
				}
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	select {
	case <-h.Ready():
	case err := <-done:
		t.Fatalf("Run returned: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("not ready within 20s")
	}
	cancel()
	select {
	case err := <-done:
		assert.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return within 20s")
	}
	var closers sync.WaitGroup
	for range 2 {
		closers.Go(func() { assert.NoError(t, h.Close()) })
	}
	closers.Wait()
	// A start and stop can be over before a reader loops again (all four
	// may be inside one status request): the readers go on until one has
	// read the stopped host, or the bound passes.
	sawStopped := func() bool { _, ok := seen.Load(StateStopped); return ok }
	for deadline := time.Now().Add(10 * time.Second); !sawStopped() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	close(stop)
	readers.Wait()
	assert.Equal(t, StateStopped, h.Status().State)
	_, sawRunning := seen.Load(StateRunning)
	assert.True(t, sawRunning || sawStopped(), "the readers saw the host run")
}
