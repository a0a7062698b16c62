package host

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorkerConnectionsSizedToCalls checks that the worker client keeps as
// many idle connections as calls may run at once: under full load no call
// dials the worker again.
func TestWorkerConnectionsSizedToCalls(t *testing.T) {
	root := weatherApp(t, `{"version":"2.0"}`)
	for _, maxCalls := range []int{0, 3, 1000} {
		h, _ := newTestHost(t, root, "http://127.0.0.1:1", &Options{MaxCallsInFlight: maxCalls})
		tr, ok := h.inv.client.Transport.(*http.Transport)
		require.True(t, ok)
		want := maxCalls
		if want == 0 {
			want = DefaultMaxCallsInFlight
		}
		assert.Equal(t, want, tr.MaxIdleConnsPerHost)
		assert.Equal(t, want, tr.MaxIdleConns)
	}
}
