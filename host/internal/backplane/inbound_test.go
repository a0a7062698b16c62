package backplane

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// finishes counts the finish calls of messages.
type finishes struct{ n atomic.Int32 }

func (f *finishes) fn() func() { return func() { f.n.Add(1) } }

func TestInboundOutcomes(t *testing.T) {
	big := Message{ID: "big", ClientID: "client1", Body: json.RawMessage(`"` + string(make([]byte, 0)) + `0123456789"`)}
	for _, tc := range []struct {
		name string
		hold HoldOptions
		// room of client1 before the offers (-1: everything)
		room   int
		offers []Message
		want   []Outcome
		// finished: the messages done with (taken, refused or dropped)
		finished int32
	}{
		{name: "taken", room: -1, offers: []Message{msg(1), msg(2)}, want: []Outcome{Taken, Taken}, finished: 2},
		{name: "held while full", room: 0, offers: []Message{msg(1), msg(2)}, want: []Outcome{Taken, Taken}, finished: 0},
		{name: "held up to the stream's bound", hold: HoldOptions{PerStream: 2}, room: 0,
			offers: []Message{msg(1), msg(2), msg(3)}, want: []Outcome{Taken, Taken, Full}, finished: 1},
		{name: "held up to the bytes bound", hold: HoldOptions{Bytes: 40}, room: 0,
			offers: []Message{msg(1), big}, want: []Outcome{Taken, Full}, finished: 1},
		{name: "no such stream", room: -1, offers: []Message{{ID: "x", ClientID: "nobody", Body: json.RawMessage(`{}`)}}, want: []Outcome{Gone}, finished: 1},
		{name: "a duplicate is finished, not answered", room: -1, offers: []Message{msg(1), msg(1)}, want: []Outcome{Taken, 0}, finished: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStreams("client1")
			s.setRoom("client1", tc.room)
			in := newInbound("test", s.deliver, tc.hold, slog.New(slog.DiscardHandler))
			ctx, cancel := context.WithCancel(t.Context())
			in.start(ctx)
			defer func() { cancel(); in.stop() }()
			var f finishes
			for i, m := range tc.offers {
				out, answer := in.offer(ctx, m, f.fn())
				assert.Equal(t, tc.want[i], out, "offer %d", i)
				assert.Equal(t, tc.want[i] != 0, answer, "offer %d answered", i)
			}
			assert.Equal(t, tc.finished, f.n.Load())
		})
	}
}

// TestInboundKeepsOrderAcrossAFullInbox: once a stream's inbox refused a
// message, every later one for that stream waits behind it, even when the
// inbox has room again by the time it comes; other streams go on.
func TestInboundKeepsOrderAcrossAFullInbox(t *testing.T) {
	s := newStreams("client1", "client2")
	in := newInbound("test", s.deliver, HoldOptions{}, slog.New(slog.DiscardHandler))
	in.start(t.Context())
	defer in.stop()
	var f finishes
	s.setRoom("client1", 1)
	for i := range 5 {
		out, _ := in.offer(t.Context(), msg(i), f.fn())
		require.Equal(t, Taken, out)
	}
	out, _ := in.offer(t.Context(), Message{ID: "o", ClientID: "client2", Body: json.RawMessage(`{}`)}, f.fn())
	require.Equal(t, Taken, out)
	assert.Equal(t, 3, in.heldCount()+0-1, "m1..m4 held") // m0 taken
	s.setRoom("client1", -1)
	got := s.waitFor(t, "client1", 5, 10*time.Second)
	assert.Equal(t, wantIDs(0, 5), ids(got))
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, int32(6), f.n.Load(), "each finished once taken")
		assert.Zero(c, in.heldCount())
	}, 10*time.Second, 5*time.Millisecond)
}

// TestInboundDropsWhatIsHeldForAStreamThatEnds: the messages held for a
// stream that ends can never be delivered: they are finished and logged.
func TestInboundDropsWhatIsHeldForAStreamThatEnds(t *testing.T) {
	s := newStreams("client1")
	logs := &testutil.SyncBuffer{}
	in := newInbound("test", s.deliver, HoldOptions{}, slog.New(slog.NewTextHandler(logs, nil)))
	in.start(t.Context())
	defer in.stop()
	var f finishes
	s.setRoom("client1", 0)
	for i := range 3 {
		out, _ := in.offer(t.Context(), msg(i), f.fn())
		require.Equal(t, Taken, out)
	}
	s.close("client1")
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, int32(3), f.n.Load())
		assert.Zero(c, in.heldCount())
	}, 10*time.Second, 5*time.Millisecond)
	assert.Contains(t, logs.String(), "dropping the messages held for a stream that ended")
	assert.Contains(t, logs.String(), "messages=3")
}

// TestInboundACopyOfAHeldMessage: a second copy of a message still held
// (its storage lease ran out) replaces the first one's handle: the newest
// copy is the one deleted once the stream takes it.
func TestInboundACopyOfAHeldMessage(t *testing.T) {
	s := newStreams("client1")
	in := newInbound("test", s.deliver, HoldOptions{}, slog.New(slog.DiscardHandler))
	in.start(t.Context())
	defer in.stop()
	s.setRoom("client1", 0)
	var first, second finishes
	out, answer := in.offer(t.Context(), msg(1), first.fn())
	require.Equal(t, Taken, out)
	require.True(t, answer)
	out, answer = in.offer(t.Context(), msg(1), second.fn())
	assert.Equal(t, Taken, out)
	assert.False(t, answer, "the sender has its outcome")
	assert.True(t, in.known("m1"))
	s.setRoom("client1", -1)
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, int32(1), second.n.Load())
	}, 10*time.Second, 5*time.Millisecond)
	assert.Zero(t, first.n.Load())
	assert.Len(t, s.snapshot("client1"), 1, "delivered once")
}

// TestEnvelopeIDsAreChecked: an id, a blob name or a sender that could not
// name a storage object is refused when the message is read, before any
// storage call is made with it; so is a Send with such a message id.
func TestEnvelopeIDsAreChecked(t *testing.T) {
	for _, text := range []string{
		`{"Id":"../x","ClientId":"c","Message":{}}`,
		`{"Id":"m1","ClientId":"c","Blob":"a/b"}`,
		`{"Id":"m1","ClientId":"c","Message":{},"From":"Not-An-Instance"}`,
		`{"Id":"` + strings.Repeat("x", 65) + `","Outcome":"taken"}`,
	} {
		_, err := decodeEnvelopeJSON([]byte(text))
		assert.Error(t, err, text)
	}
	_, err := decodeEnvelopeJSON([]byte(`{"Id":"m-1_A","ClientId":"c","Blob":"m-1_A","From":"abc123"}`))
	assert.NoError(t, err)

	for _, id := range []string{"", "a/b", strings.Repeat("x", 65)} {
		assert.Error(t, checkSend("someinstance", Message{ID: id, ClientID: "c", Body: []byte(`{}`)}), id)
	}
}
