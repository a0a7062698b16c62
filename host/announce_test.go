package host

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/metadata"
)

// sink records the changes that reach the seam.
type sink struct {
	mu  sync.Mutex
	got []notify.Change
}

func (s *sink) publish(c notify.Change) {
	s.mu.Lock()
	s.got = append(s.got, c)
	s.mu.Unlock()
}

func (s *sink) changes() []notify.Change {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]notify.Change(nil), s.got...)
}

// postChange POSTs body to the change channel with key and returns the
// status and the body of the answer.
func postChange(t *testing.T, url, key, contentType, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data)
}

// offered returns the URL and key the worker gets.
func offered(t *testing.T, vals []config.Setting) (url, key string) {
	t.Helper()
	for _, v := range vals {
		switch v.Key {
		case metadata.EnvChangesURL:
			url = v.Value
		case metadata.EnvChangesKey:
			key = v.Value
		}
	}
	return url, key
}

// TestAnnouncedChangesReachTheSeam: the worker's environment names the
// channel; a change POSTed there with the key reaches the host's seam and
// the host's log.
func TestAnnouncedChangesReachTheSeam(t *testing.T) {
	root := weatherApp(t, `{"version":"2.0"}`)
	writeFile(t, root, "local.settings.json", `{"Values":{"GREETING":"hello","`+metadata.EnvChangesURL+`":"http://127.0.0.1:1/stale"}}`)
	h, logs := newTestHost(t, root, "http://127.0.0.1:1", nil)
	s := &sink{}
	h.changeSink = s.publish

	vals := h.worker.Values()
	url, key := offered(t, vals)
	require.True(t, strings.HasPrefix(url, "http://127.0.0.1:"), url)
	require.Len(t, key, 43, "32 random bytes, base64url")
	assert.Contains(t, vals, config.Setting{Key: "GREETING", Value: "hello"}, "the app's values still reach the worker")
	assert.Equal(t, config.Setting{Key: metadata.EnvChangesURL, Value: url}, vals[len(vals)-2], "the channel comes last: it wins over a value of the same name")

	for _, body := range []string{
		`{"kind":"resourceUpdated","uri":"note://pinned"}`,
		`{"kind":"toolsListChanged"}`,
		`{"kind":"promptsListChanged"}`,
		`{"kind":"resourcesListChanged"}`,
	} {
		status, msg := postChange(t, url, key, "application/json", body)
		require.Equal(t, http.StatusOK, status, msg)
	}
	assert.Equal(t, []notify.Change{
		{Kind: notify.ResourceUpdated, URI: "note://pinned"},
		{Kind: notify.ToolsListChanged}, {Kind: notify.PromptsListChanged}, {Kind: notify.ResourcesListChanged},
	}, s.changes())
	assert.Contains(t, logs.String(), `msg="Change announced by the app" kind=resourceUpdated uri=note://pinned`)

	again, againKey := offered(t, h.worker.Values())
	assert.Equal(t, url, again, "one channel for every start of the worker")
	assert.Equal(t, key, againKey)

	require.NoError(t, h.Close())
	_, err := http.Post(url, "application/json", strings.NewReader(`{"kind":"toolsListChanged"}`))
	assert.Error(t, err, "the listener is closed with the host")
}

// TestAnnouncedChangesWithoutASink: a host with no hub connected takes the
// change (the app cannot tell) and drops it.
func TestAnnouncedChangesWithoutASink(t *testing.T) {
	h, _ := newTestHost(t, weatherApp(t, `{"version":"2.0"}`), "http://127.0.0.1:1", nil)
	url, key := offered(t, h.worker.Values())
	status, msg := postChange(t, url, key, "application/json", `{"kind":"toolsListChanged"}`)
	assert.Equal(t, http.StatusOK, status, msg)
	assert.NotPanics(t, func() { h.publishAnnounced(notify.Change{Kind: notify.ToolsListChanged}) })

}

// TestAnnouncedChangesClosedHost: a host closed before its worker starts
// offers the worker nothing, and says so with empty values.
func TestAnnouncedChangesClosedHost(t *testing.T) {
	h, _ := newTestHost(t, weatherApp(t, `{"version":"2.0"}`), "http://127.0.0.1:1", nil)
	require.NoError(t, h.Close())
	vals := h.worker.Values()
	url, key := offered(t, vals)
	assert.Empty(t, url)
	assert.Empty(t, key)
	assert.Contains(t, vals, config.Setting{Key: metadata.EnvChangesURL, Value: ""}, "an inherited value is overridden")
}

func TestMaxChangesPerSecondDefault(t *testing.T) {
	assert.Equal(t, DefaultMaxChangesPerSecond, withDefaults(nil).MaxChangesPerSecond)
	assert.Equal(t, 7, withDefaults(&Options{MaxChangesPerSecond: 7}).MaxChangesPerSecond)
}
