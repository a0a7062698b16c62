package worker

import (
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// roundTrip is an http.RoundTripper of a func.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestNotifierUsesTheInProcessChannel: an invocation whose context carries
// the host's in-process channel (metadata.WithChannel) sends its
// notifications through it; the URL it names (port 1) is never dialled.
func TestNotifierUsesTheInProcessChannel(t *testing.T) {
	var got []string
	rt := roundTrip(func(r *http.Request) (*http.Response, error) {
		body, err := io.ReadAll(r.Body)
		require.NoError(t, err)
		got = append(got, r.Header.Get("Authorization")+" "+string(body))
		return &http.Response{StatusCode: http.StatusNoContent, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	h := http.Header{}
	h.Set(metadata.HeaderNotifyURL, "http://127.0.0.1:1/invocations/inv-1/notifications")
	h.Set(metadata.HeaderNotifyToken, "tok")
	h.Set(metadata.HeaderNotifyProgress, "true")
	tc := &ToolContext{notify: newNotifier(metadata.WithChannel(t.Context(), rt), h)}
	tc.Progress(1, 2, "half")
	tc.Progress(2, 2, "done")
	require.Len(t, got, 2)
	assert.Contains(t, got[0], `Bearer tok {"type":"progress"`)
	assert.Contains(t, got[1], `"message":"done"`)
}

// TestInProcessNotifierCostsLittle: in the host's process the channel's
// URL is never dialled, so the notifier neither parses it nor makes its
// clients before a send (every call gets a notifier, few send anything).
func TestInProcessNotifierCostsLittle(t *testing.T) {
	rt := roundTrip(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusNoContent, Header: http.Header{}, Body: http.NoBody, Request: r}, nil
	})
	ctx := metadata.WithChannel(t.Context(), rt)
	h := http.Header{}
	h.Set(metadata.HeaderNotifyURL, "http://127.0.0.1:1/invocations/inv-1/notifications")
	h.Set(metadata.HeaderNotifyToken, "tok")
	allocs := testing.AllocsPerRun(100, func() {
		if newNotifier(ctx, h) == nil {
			t.Fatal("no notifier")
		}
	})
	assert.LessOrEqual(t, allocs, 2.0, "the notifier and its auth header")
}
