package worker

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// changeHost is a fake host end of the change channel: it records what it
// took and answers status (when 0: 200 with receipt, 204 when there is
// none).
type changeHost struct {
	mu      sync.Mutex
	got     []metadata.Change
	auth    []string
	status  int
	message string
	retry   string
	receipt string
}

func (h *changeHost) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.auth = append(h.auth, r.Header.Get("Authorization"))
	if h.status != 0 {
		if h.retry != "" {
			w.Header().Set("Retry-After", h.retry)
		}
		http.Error(w, h.message, h.status)
		return
	}
	var c metadata.Change
	if err := json.Unmarshal(body, &c); err != nil || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	h.got = append(h.got, c)
	if h.receipt == "" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, h.receipt)
}

func (h *changeHost) changes() []metadata.Change {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]metadata.Change(nil), h.got...)
}

// offerChanges starts a fake host on the loopback and offers it in the
// environment, as funchost does for the worker it starts.
func offerChanges(t *testing.T) *changeHost {
	t.Helper()
	h := &changeHost{}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	t.Setenv(metadata.EnvChangesURL, srv.URL+"/changes")
	t.Setenv(metadata.EnvChangesKey, "the-key")
	return h
}

func TestNotifyChangesReachTheHost(t *testing.T) {
	h := offerChanges(t)
	require.True(t, CanNotifyChanges())
	// No invocation: as a timer goroutine of the process announces.
	require.NoError(t, NotifyResourceUpdated(context.Background(), "note://pinned"))
	for _, l := range []List{ToolsList, PromptsList, ResourcesList} {
		require.NoError(t, NotifyListChanged(t.Context(), l))
	}
	assert.Equal(t, []metadata.Change{
		{Kind: "resourceUpdated", URI: "note://pinned"},
		{Kind: "toolsListChanged"}, {Kind: "promptsListChanged"}, {Kind: "resourcesListChanged"},
	}, h.changes())
	for _, a := range h.auth {
		assert.Equal(t, "Bearer the-key", a)
	}
}

// TestAnnounceReadsWhatTheHostDid: the Announce functions return what
// funchost's answer says became of the change (sent, pending, missed);
// a host that answers 204, or a body that is no receipt, says nothing
// more than that it took the change.
func TestAnnounceReadsWhatTheHostDid(t *testing.T) {
	h := offerChanges(t)
	for body, want := range map[string]Announcement{
		`{"delivery":"sent"}`:                        {Delivery: DeliverySent},
		`{"delivery":"pending","waits":"backplane"}`: {Delivery: DeliveryPending, Waits: "backplane"},
		`{"delivery":"pending","waits":"rate"}`:      {Delivery: DeliveryPending, Waits: "rate"},
		`{"delivery":"missed","missed":1,"of":2}`:    {Delivery: DeliveryMissed, Missed: 1, Of: 2},
		`{"delivery":"missed"}`:                      {Delivery: DeliveryMissed},
		`{"delivery":"everywhere"}`:                  {},
		`not json`:                                   {},
		``:                                           {}, // 204
	} {
		h.mu.Lock()
		h.receipt = body
		h.mu.Unlock()
		got, err := AnnounceResourceUpdated(t.Context(), "note://pinned")
		require.NoError(t, err, body)
		assert.Equal(t, want, got, body)
		got, err = AnnounceListChanged(t.Context(), ToolsList)
		require.NoError(t, err, body)
		assert.Equal(t, want, got, body)
		require.NoError(t, NotifyResourceUpdated(t.Context(), "note://pinned"), "the error-only form reads the same answer")
	}

	t.Setenv(metadata.EnvChangesURL, "") // the real Azure Functions host
	got, err := AnnounceResourceUpdated(t.Context(), "note://pinned")
	assert.ErrorIs(t, err, ErrNotSupported)
	assert.Equal(t, Announcement{}, got)
	_, err = AnnounceListChanged(t.Context(), "everything")
	assert.ErrorIs(t, err, ErrBadChange)
}

// TestNotifyChangesWithoutAChannel: the real Azure Functions host sets no
// channel; a URL that is not plain http to the loopback is no channel
// either. Nothing is sent and the error says so at once.
func TestNotifyChangesWithoutAChannel(t *testing.T) {
	h := offerChanges(t)
	for name, env := range map[string][2]string{
		"real host (nothing set)": {"", ""},
		"no key":                  {"http://127.0.0.1:1/changes", ""},
		"not loopback":            {"http://example.invalid/changes", "k"},
		"https":                   {"https://127.0.0.1:1/changes", "k"},
		"user in the URL":         {"http://u:p@127.0.0.1:1/changes", "k"},
	} {
		t.Setenv(metadata.EnvChangesURL, env[0])
		t.Setenv(metadata.EnvChangesKey, env[1])
		assert.False(t, CanNotifyChanges(), name)
		err := NotifyResourceUpdated(t.Context(), "note://pinned")
		assert.ErrorIs(t, err, ErrNotSupported, name)
		assert.ErrorIs(t, NotifyListChanged(t.Context(), ToolsList), ErrNotSupported, name)
	}
	assert.Empty(t, h.changes())
}

func TestNotifyChangesRefusesBadChanges(t *testing.T) {
	h := offerChanges(t)
	for name, uri := range map[string]string{
		"empty":     "",
		"relative":  "pinned",
		"template":  "note://{name}",
		"space":     "note://a b",
		"too long":  "note://" + strings.Repeat("a", metadata.MaxChangeURI),
		"no scheme": "://x",
	} {
		assert.ErrorIs(t, NotifyResourceUpdated(t.Context(), uri), ErrBadChange, name)
	}
	assert.ErrorIs(t, NotifyListChanged(t.Context(), "tasks"), ErrBadChange)
	assert.Empty(t, h.changes(), "nothing bad is sent")
}

func TestNotifyChangesHostRefusals(t *testing.T) {
	h := offerChanges(t)
	h.status, h.message, h.retry = http.StatusTooManyRequests, "at most 100 changes per second", "1"
	err := NotifyResourceUpdated(t.Context(), "note://pinned")
	require.ErrorIs(t, err, ErrTooManyChanges)
	ce, ok := errors.AsType[*ChangeError](err)
	require.True(t, ok)
	assert.Equal(t, time.Second, ce.RetryAfter)
	assert.Contains(t, err.Error(), "at most 100 changes per second")

	h.status, h.retry = http.StatusBadRequest, ""
	assert.ErrorIs(t, NotifyListChanged(t.Context(), ToolsList), ErrBadChange)

	h.status = http.StatusUnauthorized
	err = NotifyListChanged(t.Context(), ToolsList)
	ce, ok = errors.AsType[*ChangeError](err)
	require.True(t, ok, "%v", err)
	assert.Equal(t, http.StatusUnauthorized, ce.Status)
	assert.NotErrorIs(t, err, ErrBadChange)
	assert.NotErrorIs(t, err, ErrTooManyChanges)
}

func TestNotifyChangesHonoursTheContext(t *testing.T) {
	offerChanges(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	assert.ErrorIs(t, NotifyResourceUpdated(ctx, "note://pinned"), context.Canceled)
}
