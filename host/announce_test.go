package host

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

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

	vals := h.workerValues()
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
		require.Equal(t, http.StatusNoContent, status, msg)
	}
	assert.Equal(t, []notify.Change{
		{Kind: notify.ResourceUpdated, URI: "note://pinned"},
		{Kind: notify.ToolsListChanged}, {Kind: notify.PromptsListChanged}, {Kind: notify.ResourcesListChanged},
	}, s.changes())
	assert.Contains(t, logs.String(), `msg="Change announced by the app" kind=resourceUpdated uri=note://pinned`)

	again, againKey := offered(t, h.workerValues())
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
	url, key := offered(t, h.workerValues())
	status, msg := postChange(t, url, key, "application/json", `{"kind":"toolsListChanged"}`)
	assert.Equal(t, http.StatusNoContent, status, msg)
	assert.NotPanics(t, func() { h.publishAnnounced(notify.Change{Kind: notify.ToolsListChanged}) })

	var none *changeChannel // a Host not made by New
	u, k := none.offer()
	assert.Empty(t, u+k)
	assert.NotPanics(t, none.close)
}

// TestAnnouncedChangesClosedHost: a host closed before its worker starts
// offers the worker nothing, and says so with empty values.
func TestAnnouncedChangesClosedHost(t *testing.T) {
	h, _ := newTestHost(t, weatherApp(t, `{"version":"2.0"}`), "http://127.0.0.1:1", nil)
	require.NoError(t, h.Close())
	vals := h.workerValues()
	url, key := offered(t, vals)
	assert.Empty(t, url)
	assert.Empty(t, key)
	assert.Contains(t, vals, config.Setting{Key: metadata.EnvChangesURL, Value: ""}, "an inherited value is overridden")
}

func newTestChannel(t *testing.T, limit *rate.Limiter) (*changeChannel, *sink, string, string) {
	t.Helper()
	s := &sink{}
	cc := newChangeChannel(slog.New(slog.NewTextHandler(io.Discard, nil)), limit, s.publish)
	t.Cleanup(cc.close)
	url, key := cc.offer()
	require.NotEmpty(t, url)
	return cc, s, url, key
}

func TestAnnouncedChangesRefused(t *testing.T) {
	_, s, url, key := newTestChannel(t, rate.NewLimiter(rate.Inf, 0))
	wrong := []byte(key)
	wrong[0] ^= 1
	for name, tc := range map[string]struct {
		key, contentType, body string
		status                 int
	}{
		"no key":          {"", "application/json", `{"kind":"toolsListChanged"}`, http.StatusUnauthorized},
		"wrong key":       {string(wrong), "application/json", `{"kind":"toolsListChanged"}`, http.StatusUnauthorized},
		"not JSON":        {key, "text/plain", `{"kind":"toolsListChanged"}`, http.StatusUnsupportedMediaType},
		"too large":       {key, "application/json", `{"kind":"resourceUpdated","uri":"note://` + strings.Repeat("a", metadata.MaxChangeBytes) + `"}`, http.StatusRequestEntityTooLarge},
		"malformed":       {key, "application/json", `{"kind":`, http.StatusBadRequest},
		"unknown kind":    {key, "application/json", `{"kind":"everything"}`, http.StatusBadRequest},
		"a task's change": {key, "application/json", `{"kind":"taskStatus","taskId":"t","owner":"o","task":{}}`, http.StatusBadRequest},
		"no uri":          {key, "application/json", `{"kind":"resourceUpdated"}`, http.StatusBadRequest},
		"relative uri":    {key, "application/json", `{"kind":"resourceUpdated","uri":"pinned"}`, http.StatusBadRequest},
		"template":        {key, "application/json", `{"kind":"resourceUpdated","uri":"note://{name}"}`, http.StatusBadRequest},
		"long uri":        {key, "application/json", `{"kind":"resourceUpdated","uri":"note://` + strings.Repeat("a", metadata.MaxChangeURI) + `"}`, http.StatusBadRequest},
		"list with uri":   {key, "application/json", `{"kind":"toolsListChanged","uri":"note://x"}`, http.StatusBadRequest},
	} {
		status, msg := postChange(t, url, tc.key, tc.contentType, tc.body)
		assert.Equal(t, tc.status, status, "%s: %s", name, msg)
	}
	assert.Empty(t, s.changes(), "nothing refused reaches the seam")

	resp, err := http.Get(url)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
	status, _ := postChange(t, strings.TrimSuffix(url, changesPath)+"/other", key, "application/json", `{"kind":"toolsListChanged"}`)
	assert.Equal(t, http.StatusNotFound, status)
}

// TestAnnouncedChangesRate: past the burst, a change is refused with 429
// and Retry-After until the bucket fills again (here: an hour).
func TestAnnouncedChangesRate(t *testing.T) {
	_, s, url, key := newTestChannel(t, rate.NewLimiter(rate.Every(time.Hour), 2))
	for range 2 {
		status, msg := postChange(t, url, key, "application/json", `{"kind":"toolsListChanged"}`)
		require.Equal(t, http.StatusNoContent, status, msg)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`{"kind":"toolsListChanged"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	msg, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	assert.Equal(t, "1", resp.Header.Get("Retry-After"))
	assert.Contains(t, string(msg), "MaxChangesPerSecond")
	assert.Len(t, s.changes(), 2)

	status, _ := postChange(t, url, "bad", "application/json", `{"kind":"toolsListChanged"}`)
	assert.Equal(t, http.StatusUnauthorized, status, "a request without the key is refused before the rate")
}

// TestAnnouncedKindsMatch: the worker's names of the kinds are the host's.
func TestAnnouncedKindsMatch(t *testing.T) {
	assert.EqualValues(t, notify.ResourceUpdated, metadata.ChangeResourceUpdated)
	assert.EqualValues(t, notify.ToolsListChanged, metadata.ChangeToolsListChanged)
	assert.EqualValues(t, notify.PromptsListChanged, metadata.ChangePromptsListChanged)
	assert.EqualValues(t, notify.ResourcesListChanged, metadata.ChangeResourcesListChanged)
	assert.Equal(t, notify.MaxURI, metadata.MaxChangeURI)
}

func TestMaxChangesPerSecondDefault(t *testing.T) {
	assert.Equal(t, DefaultMaxChangesPerSecond, withDefaults(nil).MaxChangesPerSecond)
	assert.Equal(t, 7, withDefaults(&Options{MaxChangesPerSecond: 7}).MaxChangesPerSecond)
}

// BenchmarkAnnounceChange: one change POSTed on the channel and taken, a
// loopback round trip on a kept-alive connection.
func BenchmarkAnnounceChange(b *testing.B) {
	s := &sink{}
	cc := newChangeChannel(slog.New(slog.DiscardHandler), rate.NewLimiter(rate.Inf, 0), s.publish)
	defer cc.close()
	url, key := cc.offer()
	body := `{"kind":"resourceUpdated","uri":"note://pinned"}`
	client := &http.Client{}
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			b.Fatal(resp.Status)
		}
	}
}
