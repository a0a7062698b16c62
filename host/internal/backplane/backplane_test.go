package backplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func repoRoot(t testing.TB) string {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	require.NoError(t, err)
	return root
}

func msg(i int) Message {
	return Message{ID: fmt.Sprintf("m%d", i), ClientID: "client1", Body: json.RawMessage(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, i))}
}

// streams stands in for the streams of an instance: each client's inbox
// takes up to room messages (unbounded when room is negative); a client
// that is not open is gone.
type streams struct {
	mu   sync.Mutex
	room map[string]int
	got  map[string][]Message
	more chan struct{}
}

func newStreams(clients ...string) *streams {
	s := &streams{room: map[string]int{}, got: map[string][]Message{}, more: make(chan struct{}, 1)}
	for _, c := range clients {
		s.room[c] = -1
	}
	return s
}

func (s *streams) deliver(_ context.Context, m Message) Outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	room, open := s.room[m.ClientID]
	switch {
	case !open:
		return Gone
	case room == 0:
		return Full
	case room > 0:
		s.room[m.ClientID] = room - 1
	}
	s.got[m.ClientID] = append(s.got[m.ClientID], m)
	select {
	case s.more <- struct{}{}:
	default:
	}
	return Taken
}

// setRoom sets what client's inbox takes from now on (-1: everything).
func (s *streams) setRoom(client string, n int) {
	s.mu.Lock()
	s.room[client] = n
	s.mu.Unlock()
}

func (s *streams) close(client string) {
	s.mu.Lock()
	delete(s.room, client)
	s.mu.Unlock()
}

func (s *streams) snapshot(client string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.got[client]...)
}

// waitFor waits (bounded) until client got n messages.
func (s *streams) waitFor(t *testing.T, client string, n int, within time.Duration) []Message {
	t.Helper()
	deadline := time.After(within)
	for {
		if got := s.snapshot(client); len(got) >= n {
			return got
		}
		select {
		case <-s.more:
		case <-deadline:
			t.Fatalf("client %s got %d messages within %s, want %d", client, len(s.snapshot(client)), within, n)
		}
	}
}

// ids returns the ids of msgs.
func ids(msgs []Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}

func wantIDs(from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, msg(i).ID)
	}
	return out
}

// testBackplane is what every backplane must do: a and b are two
// instances of it, not started; kill ends one as a killed process would
// (nil when the backplane lives in one process), and dead waits until the
// instance killed is known dead.
func testBackplane(t *testing.T, a, b Backplane, aID string, kill func(), dead func(*testing.T)) {
	ctx := t.Context()
	sa := newStreams("client1", "client2")
	require.NoError(t, a.Start(ctx, sa.deliver))
	require.NoError(t, b.Start(ctx, newStreams().deliver))

	t.Run("in order, each taken", func(t *testing.T) {
		for i := range 50 {
			out, err := b.Send(ctx, aID, msg(i))
			require.NoError(t, err)
			require.Equal(t, Taken, out)
		}
		assert.Equal(t, wantIDs(0, 50), ids(sa.snapshot("client1")))
	})

	t.Run("a full stream's messages are held, in order, until it takes them", func(t *testing.T) {
		sa.setRoom("client1", 0)
		for i := 100; i < 110; i++ {
			out, err := b.Send(ctx, aID, msg(i))
			require.NoError(t, err)
			assert.Equal(t, Taken, out, "held for the stream")
		}
		other := Message{ID: "o1", ClientID: "client2", Body: json.RawMessage(`{}`)}
		out, err := b.Send(ctx, aID, other)
		require.NoError(t, err)
		assert.Equal(t, Taken, out, "another stream is not held up")
		assert.Len(t, sa.snapshot("client2"), 1)
		assert.Len(t, sa.snapshot("client1"), 50, "nothing delivered while the stream is full")
		sa.setRoom("client1", 3)
		sa.waitFor(t, "client1", 53, 10*time.Second)
		sa.setRoom("client1", -1)
		got := sa.waitFor(t, "client1", 60, 10*time.Second)
		assert.Equal(t, wantIDs(100, 110), ids(got[50:]))
	})

	t.Run("a stream that is not there", func(t *testing.T) {
		out, err := b.Send(ctx, aID, Message{ID: "g1", ClientID: "nobody", Body: json.RawMessage(`{}`)})
		require.NoError(t, err)
		assert.Equal(t, Gone, out)
	})

	t.Run("an unknown instance", func(t *testing.T) {
		_, err := b.Send(ctx, "nosuchinstance", msg(1))
		assert.ErrorIs(t, err, ErrUnknownInstance)
	})

	if kill == nil {
		require.NoError(t, a.Stop(ctx))
	} else {
		kill()
		dead(t)
	}
	// The instances' outcome timeout is long: an error other than
	// ErrNoOutcome means the sender did not wait for an answer.
	_, err := b.Send(ctx, aID, msg(999))
	require.ErrorIs(t, err, ErrUnknownInstance, "an instance that is gone")
	require.NoError(t, b.Stop(ctx))
}

// countingTransport counts the requests sent through it, by method and
// the last element of the path's query "comp" or resource kind.
type countingTransport struct {
	next  *http.Client
	total atomic.Int64
	mu    sync.Mutex
	by    map[string]int
}

func newCountingTransport(c *http.Client) *countingTransport {
	if c == nil {
		c = &http.Client{}
	}
	return &countingTransport{next: c, by: map[string]int{}}
}

func (c *countingTransport) Do(req *http.Request) (*http.Response, error) {
	c.total.Add(1)
	kind := req.Method + " " + req.URL.Query().Get("comp")
	if strings.HasSuffix(req.URL.Path, "/messages") {
		kind = req.Method + " messages"
	}
	c.mu.Lock()
	c.by[kind]++
	c.mu.Unlock()
	return c.next.Do(req)
}

func (c *countingTransport) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]int{}
	for k, v := range c.by {
		out[k] = v
	}
	return out
}

var errInjected = errors.New("injected: storage lost the delete")
