package clientreq

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// TestReadResultLeavesNoTimer: once the live reader got the result and its
// request ends, the stream is forgotten and no orphan timer keeps it (and
// its events) alive for the grace period; an unread result keeps its timer.
func TestReadResultLeavesNoTimer(t *testing.T) {
	for _, read := range []bool{true, false} {
		rec := httptest.NewRecorder()
		r := &Stream{id: "s", store: &Store{}, grace: time.Hour, finished: make(chan struct{}), release: make(chan struct{})}
		r.store.add(r)
		l := &Live{w: rec, rc: http.NewResponseController(rec), gone: make(chan struct{})}
		r.live = l
		if !read {
			r.detachLive(l) // the client left before the result
			r.orphan.Stop()
			r.orphan = nil
		}
		r.mu.Lock()
		r.last = true
		r.mu.Unlock()
		r.append([]byte("data: {}\n\n"))
		r.Finish()
		r.detachLive(l) // the reading request returns
		r.mu.Lock()
		assert.Equal(t, !read, r.orphan != nil, "read %v: orphan timer", read)
		if r.orphan != nil {
			r.orphan.Stop()
		}
		r.mu.Unlock()
	}
}

// FuzzParseEventID: any Last-Event-ID parses without panic; one that
// parses names a stream id of the server's shape and an event number that
// prints back to the same text; resuming from any number never panics.
func FuzzParseEventID(f *testing.F) {
	for _, seed := range []string{"inst~abcdefghijklmnop_0", "inst~abcdefghijklmnop_999999",
		"inst~abcdefghijklmnop_9223372036854775807", "x_-1", "_1", "a~b_+1", "a~b_01", "~_", "a~B_1"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, id string) {
		stream, n, ok := ParseEventID(id)
		if !ok {
			return
		}
		if stream+"_"+strconv.Itoa(n) != id || n < 0 {
			t.Fatalf("ParseEventID(%q) = %q, %d", id, stream, n)
		}
		rec := httptest.NewRecorder()
		r := &Stream{id: stream, store: &Store{}, grace: time.Hour, finished: make(chan struct{}), release: make(chan struct{}), cancel: func(error) {}}
		r.append([]byte("data: {}\n\n"))
		r.append([]byte("data: {}\n\n"))
		if l, ok := r.Resume(rec, n); ok {
			r.detachLive(l)
		}
		r.mu.Lock()
		if r.orphan != nil {
			r.orphan.Stop()
		}
		r.mu.Unlock()
	})
}

// TestFinishStopsThePrimingTimer: a call that ends before the priming
// event's delay leaves no timer to run after it (a goroutine per call, and
// its stream kept alive until then).
func TestFinishStopsThePrimingTimer(t *testing.T) {
	s := NewStore(owner.Limit{}, owner.Limit{})
	r, _ := s.Open(httptest.NewRecorder(), "inst", "scope", owner.ID("client"), time.Hour)
	require.NotNil(t, r)
	r.mu.Lock()
	r.last = true
	r.mu.Unlock()
	r.append([]byte("event: message\ndata: {}\n\n"))
	r.Finish()
	assert.False(t, r.prime.Stop(), "the priming timer was stopped by Finish")
	assert.Nil(t, s.Get(r.id), "a result read is forgotten at once")
}

// TestKeptEventsOutliveOtherStreams: the events a stream keeps for a
// resume stay as written while other streams write and forget theirs
// (whose buffers are used again).
func TestKeptEventsOutliveOtherStreams(t *testing.T) {
	s := NewStore(owner.Limit{}, owner.Limit{})
	kept, l := s.Open(httptest.NewRecorder(), "inst", "scope", owner.ID("client"), time.Hour)
	require.NotNil(t, kept)
	kept.detachLive(l) // its client left: it keeps its events
	var want []string
	for i := range 3 {
		ev := fmt.Sprintf("event: message\ndata: {\"n\":%d,\"pad\":%q}\n\n", i, strings.Repeat("k", 100*i))
		kept.append([]byte(ev))
		want = append(want, fmt.Sprintf("id: %s_%d\n%s", kept.id, i+1, ev))
	}
	for i := range 50 {
		r, _ := s.Open(httptest.NewRecorder(), "inst", "scope", owner.ID("client"), time.Hour)
		require.NotNil(t, r)
		r.append([]byte(fmt.Sprintf("event: message\ndata: {\"other\":%d,\"pad\":%q}\n\n", i, strings.Repeat("x", 150))))
		r.mu.Lock()
		r.last = true
		r.mu.Unlock()
		r.append([]byte("event: message\ndata: " + strings.Repeat("y", 200) + "\n\n"))
		r.Finish()
	}
	rec := httptest.NewRecorder()
	_, ok := kept.Resume(rec, 0)
	require.True(t, ok)
	assert.Equal(t, strings.Join(want, ""), rec.Body.String())
	kept.mu.Lock()
	if kept.orphan != nil {
		kept.orphan.Stop()
	}
	kept.mu.Unlock()
}
