package announce

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/funcmcp/funcmcp/host/internal/backplane"
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

// tracked is publish as the change channel calls it: no relay to report on.
func (s *sink) tracked(c notify.Change) <-chan error {
	s.publish(c)
	return nil
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

func newTestChannel(t *testing.T, limit *rate.Limiter) (*Channel, *sink, string, string) {
	t.Helper()
	s := &sink{}
	cc := New(slog.New(slog.NewTextHandler(io.Discard, nil)), limit, s.tracked)
	t.Cleanup(cc.Close)
	url, key := cc.Offer()
	require.NotEmpty(t, url)
	return cc, s, url, key
}

// TestNilChannel: a Host not made by New has no channel; it offers nothing
// and closes.
func TestNilChannel(t *testing.T) {
	var none *Channel
	u, k := none.Offer()
	assert.Empty(t, u+k)
	assert.NotPanics(t, none.Close)
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
	status, _ := postChange(t, strings.TrimSuffix(url, Path)+"/other", key, "application/json", `{"kind":"toolsListChanged"}`)
	assert.Equal(t, http.StatusNotFound, status)
}

// TestAnnouncedFloodLosesNoChange: an app that announces one resource far
// past the rate (pin_note called a thousand times) gets every announcement
// taken, and the changes of other resources and of a list announced in the
// same window all reach the clients, at the rate.
func TestAnnouncedFloodLosesNoChange(t *testing.T) {
	_, s, url, key := newTestChannel(t, rate.NewLimiter(5, 1))
	others := map[int]string{
		100: `{"kind":"resourceUpdated","uri":"note://a"}`,
		200: `{"kind":"toolsListChanged"}`,
		300: `{"kind":"resourceUpdated","uri":"note://b"}`,
	}
	refused := 0
	for i := range 400 {
		body := `{"kind":"resourceUpdated","uri":"note://pinned"}`
		if o, ok := others[i]; ok {
			body = o
		}
		if status, _ := postChange(t, url, key, "application/json", body); status != http.StatusOK {
			refused++
		}
	}
	assert.Zero(t, refused, "past the rate a change waits its turn; it is not refused")

	want := []notify.Change{
		{Kind: notify.ResourceUpdated, URI: "note://pinned"},
		{Kind: notify.ResourceUpdated, URI: "note://a"},
		{Kind: notify.ToolsListChanged},
		{Kind: notify.ResourceUpdated, URI: "note://b"},
	}
	require.Eventually(t, func() bool {
		got := s.changes()
		for _, w := range want {
			if !slices.ContainsFunc(got, func(c notify.Change) bool { return c.Kind == w.Kind && c.URI == w.URI }) {
				return false
			}
		}
		return true
	}, 20*time.Second, 10*time.Millisecond, "every change announced reaches the clients; got %v", s.changes())
}

// gate is a rate a test opens one turn at a time.
type gate struct{ turn chan struct{} }

func newGate() *gate              { return &gate{turn: make(chan struct{})} }
func (g *gate) Allow() bool       { return false }
func (g *gate) open(t *testing.T) { t.Helper(); g.turn <- struct{}{} }
func (g *gate) Wait(ctx context.Context) error {
	select {
	case <-g.turn:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TestAnnouncedChangesCoalesce: past the rate, changes wait one per
// resource and list, in the order they first came; a change of a resource
// that already waits is merged into it, and each turn publishes one.
func TestAnnouncedChangesCoalesce(t *testing.T) {
	cc, s, url, key := newTestChannel(t, rate.NewLimiter(rate.Inf, 0))
	g := newGate()
	cc.limit = g // no turn but those the test opens
	post := func(body string) {
		t.Helper()
		status, msg := postChange(t, url, key, "application/json", body)
		require.Equal(t, http.StatusOK, status, msg)
	}
	for i := range 300 {
		switch i {
		case 10:
			post(`{"kind":"resourceUpdated","uri":"note://a"}`)
		case 20:
			post(`{"kind":"toolsListChanged"}`)
		case 30:
			post(`{"kind":"resourceUpdated","uri":"note://b"}`)
		case 40:
			post(`{"kind":"toolsListChanged"}`)
		}
		post(`{"kind":"resourceUpdated","uri":"note://pinned"}`)
	}
	assert.Empty(t, s.changes(), "no turn yet")

	want := []notify.Change{
		{Kind: notify.ResourceUpdated, URI: "note://pinned"},
		{Kind: notify.ResourceUpdated, URI: "note://a"},
		{Kind: notify.ToolsListChanged},
		{Kind: notify.ResourceUpdated, URI: "note://b"},
	}
	for i := range want {
		g.open(t)
		require.Eventually(t, func() bool { return len(s.changes()) == i+1 }, 10*time.Second, time.Millisecond)
	}
	assert.Equal(t, want, s.changes(), "one per resource and list, in the order they came")
	require.Eventually(t, func() bool {
		cc.qmu.Lock()
		defer cc.qmu.Unlock()
		return !cc.draining
	}, 10*time.Second, time.Millisecond, "nothing waits: the draining goroutine ends")

	post(`{"kind":"resourceUpdated","uri":"note://pinned"}`)
	g.open(t)
	require.Eventually(t, func() bool { return len(s.changes()) == len(want)+1 }, 10*time.Second, time.Millisecond)
	assert.Equal(t, notify.Change{Kind: notify.ResourceUpdated, URI: "note://pinned"}, s.changes()[len(want)],
		"a change after the last delivery is delivered again")
}

// TestChangeQueueCollapses: past its bound of distinct resources, the
// resource changes that wait become one change of the resources list,
// which stands for every resource change until it is delivered.
func TestChangeQueueCollapses(t *testing.T) {
	q := changeQueue{bound: 3}
	res := func(u string) notify.Change { return notify.Change{Kind: notify.ResourceUpdated, URI: u} }
	add := func(c notify.Change) (int, int) { return q.add(c) }

	for _, c := range []notify.Change{{Kind: notify.PromptsListChanged}, res("r://1"), res("r://2"), res("r://3")} {
		how, n := add(c)
		require.Equal(t, queued, how)
		require.Zero(t, n)
	}
	how, n := add(res("r://1"))
	assert.Equal(t, merged, how, "the same resource waits already")
	assert.Zero(t, n)

	how, n = add(res("r://4"))
	assert.Equal(t, merged, how)
	assert.Equal(t, 3, n, "a fourth distinct resource: the three that wait become a change of the list")
	assert.Equal(t, []notify.Change{{Kind: notify.PromptsListChanged}, {Kind: notify.ResourcesListChanged}}, q.order)
	for _, u := range []string{"r://5", "r://1", "r://4"} {
		how, n = add(res(u))
		assert.Equal(t, merged, how, "the list change stands for %s", u)
		assert.Zero(t, n)
	}
	how, _ = add(notify.Change{Kind: notify.ResourcesListChanged})
	assert.Equal(t, merged, how)
	assert.Len(t, q.waiting, 2, "nothing more is kept")

	var got []notify.Change
	for c, ok := q.pop(); ok; c, ok = q.pop() {
		got = append(got, c)
	}
	assert.Equal(t, []notify.Change{{Kind: notify.PromptsListChanged}, {Kind: notify.ResourcesListChanged}}, got)
	assert.Nil(t, q.order)
	assert.Nil(t, q.waiting)

	how, _ = add(res("r://6"))
	assert.Equal(t, queued, how, "once delivered, resources wait one by one again")
	assert.Equal(t, []notify.Change{res("r://6")}, q.order)
}

// TestChangeQueueCollapseKeepsAWaitingListChange: a resources list change
// the app announced and that still waits stands for the resources past the
// bound; it keeps its place.
func TestChangeQueueCollapseKeepsAWaitingListChange(t *testing.T) {
	q := changeQueue{bound: 1}
	q.add(notify.Change{Kind: notify.ResourceUpdated, URI: "r://1"})
	q.add(notify.Change{Kind: notify.ResourcesListChanged})
	q.add(notify.Change{Kind: notify.ToolsListChanged})
	_, n := q.add(notify.Change{Kind: notify.ResourceUpdated, URI: "r://2"})
	assert.Equal(t, 1, n)
	assert.Equal(t, []notify.Change{{Kind: notify.ResourcesListChanged}, {Kind: notify.ToolsListChanged}}, q.order)
}

func TestPendingBound(t *testing.T) {
	assert.Equal(t, 1000, pendingBound(DefaultMaxChangesPerSecond), "ten seconds of the default rate")
	assert.Equal(t, MaxPendingChanges, pendingBound(rate.Inf))
	assert.Equal(t, MaxPendingChanges, pendingBound(5000))
	assert.Equal(t, 70, pendingBound(7))
	assert.Equal(t, 1, pendingBound(rate.Every(time.Hour)))
}

// TestAnnouncedKindsMatch: the worker's names of the kinds are the host's.
func TestAnnouncedKindsMatch(t *testing.T) {
	assert.EqualValues(t, notify.ResourceUpdated, metadata.ChangeResourceUpdated)
	assert.EqualValues(t, notify.ToolsListChanged, metadata.ChangeToolsListChanged)
	assert.EqualValues(t, notify.PromptsListChanged, metadata.ChangePromptsListChanged)
	assert.EqualValues(t, notify.ResourcesListChanged, metadata.ChangeResourcesListChanged)
	assert.Equal(t, notify.MaxURI, metadata.MaxChangeURI)
}

// BenchmarkAnnounceChange: one change POSTed on the channel and taken, a
// loopback round trip on a kept-alive connection.
func BenchmarkAnnounceChange(b *testing.B) {
	s := &sink{}
	cc := New(slog.New(slog.DiscardHandler), rate.NewLimiter(rate.Inf, 0), s.tracked)
	defer cc.Close()
	url, key := cc.Offer()
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
		if resp.StatusCode != http.StatusOK {
			b.Fatal(resp.Status)
		}
	}
}

// fakeBroadcaster is a backplane's relay whose broadcasts do what a test says.
type fakeBroadcaster struct {
	broadcast func(ctx context.Context) error
}

func (f *fakeBroadcaster) Broadcast(ctx context.Context, _ []byte) error { return f.broadcast(ctx) }

// receiptOf decodes the change channel's answer.
func receiptOf(t *testing.T, status int, body string) metadata.ChangeReceipt {
	t.Helper()
	require.Equal(t, http.StatusOK, status, body)
	var rc metadata.ChangeReceipt
	require.NoError(t, json.Unmarshal([]byte(body), &rc), body)
	return rc
}

// TestAnnouncedChangeSaysWhatWasDone: the answer to the worker says what
// became of the change by then: sent when the backplane took it for every
// other instance, missed when it failed for some, pending when the
// backplane does not confirm in time (storage paused) or the change waits
// for its turn past the rate. The change reaches the listeners of this
// instance in every case but the last, whose turn has not come.
func TestAnnouncedChangeSaysWhatWasDone(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var mode sync.Mutex
	var broadcast func(ctx context.Context) error
	fake := &fakeBroadcaster{broadcast: func(ctx context.Context) error {
		mode.Lock()
		b := broadcast
		mode.Unlock()
		return b(ctx)
	}}
	set := func(b func(ctx context.Context) error) { mode.Lock(); broadcast = b; mode.Unlock() }

	hub := notify.NewHub(notify.Limits{}, nil)
	defer hub.Close()
	hub.SetRelay(fake)
	l, err := hub.Listen(notify.ListenerOptions{Owner: "a", Wake: func() {}}, notify.Filter{Resources: []string{"note://pinned"}})
	require.NoError(t, err)
	defer l.End(nil)
	cc := New(slog.New(slog.DiscardHandler), rate.NewLimiter(rate.Inf, 0), hub.PublishTracked)
	t.Cleanup(cc.Close)
	cc.confirmWait = 300 * time.Millisecond
	url, key := cc.Offer()
	pin := func() metadata.ChangeReceipt {
		t.Helper()
		status, body := postChange(t, url, key, "application/json", `{"kind":"resourceUpdated","uri":"note://pinned"}`)
		return receiptOf(t, status, body)
	}
	heard := func() {
		t.Helper()
		c, ok := l.Next()
		require.True(t, ok, "the listener here hears of the change")
		assert.Equal(t, "note://pinned", c.URI)
	}

	set(func(context.Context) error { return nil })
	assert.Equal(t, metadata.ChangeReceipt{Delivery: metadata.DeliverySent}, pin(), "the backplane took it for every instance")
	heard()

	set(func(context.Context) error {
		return &backplane.BroadcastError{Missed: 1, Of: 2, Err: errors.New("instance x: 500")}
	})
	assert.Equal(t, metadata.ChangeReceipt{Delivery: metadata.DeliveryMissed, Missed: 1, Of: 2}, pin())
	heard()

	set(func(context.Context) error { return errors.New("listing the instances: connection refused") })
	assert.Equal(t, metadata.ChangeReceipt{Delivery: metadata.DeliveryMissed}, pin(), "no instance counted")
	heard()

	set(func(ctx context.Context) error { // storage paused: nothing answers
		select {
		case <-release:
		case <-ctx.Done():
		}
		return ctx.Err()
	})
	assert.Equal(t, metadata.ChangeReceipt{Delivery: metadata.DeliveryPending, Waits: metadata.WaitsBackplane}, pin(),
		"taken, delivery pending: not called sent while the backplane does not confirm")
	heard()

	g := newGate()
	cc.limit = g
	assert.Equal(t, metadata.ChangeReceipt{Delivery: metadata.DeliveryPending, Waits: metadata.WaitsRate}, pin(),
		"past the rate: taken, waits its turn")
}
