package backplane

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// broadcastPair is two started instances of one backplane, each handing
// its broadcasts to a received.
type broadcastPair struct {
	a, b   Broadcaster
	ra, rb *received
}

// testBroadcast is what every backplane's broadcast does: what one
// instance broadcasts reaches the other, not itself, whole and once each;
// a broadcast over MaxBroadcast is refused.
func testBroadcast(t *testing.T, p broadcastPair) {
	ctx := t.Context()
	large := []byte(strings.Repeat("w", MaxBroadcast))
	require.NoError(t, p.a.Broadcast(ctx, []byte(`{"kind":"toolsListChanged"}`)))
	require.NoError(t, p.a.Broadcast(ctx, large))
	require.NoError(t, p.b.Broadcast(ctx, []byte("from b")))
	got := p.rb.wait(t, 2)
	assert.Equal(t, `{"kind":"toolsListChanged"}`, string(got[0]))
	assert.Equal(t, large, got[1], "MaxBroadcast bytes arrive whole")
	assert.Equal(t, "from b", string(p.ra.wait(t, 1)[0]))
	// A last broadcast each way: once it arrived, nothing else may have.
	require.NoError(t, p.a.Broadcast(ctx, []byte("last a")))
	require.NoError(t, p.b.Broadcast(ctx, []byte("last b")))
	assert.Len(t, p.rb.wait(t, 3), 3, "once each, not to the sender")
	assert.Len(t, p.ra.wait(t, 2), 2, "once each, not to the sender")
	assert.ErrorIs(t, p.a.Broadcast(ctx, make([]byte, MaxBroadcast+1)), ErrBroadcastTooLarge)
}

// TestQueueBroadcast: two instances on Azurite.
func TestQueueBroadcast(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	st := Storage{ConnectionString: az.ConnectionString()}
	ra, rb := newReceived(), newReceived()
	a := newTestQueue(t, "casta", st, &QueueOptions{OnBroadcast: ra.add})
	b := newTestQueue(t, "castb", st, &QueueOptions{OnBroadcast: rb.add})
	for _, q := range []*Queue{a, b} {
		require.NoError(t, q.Start(t.Context(), newStreams().deliver))
		defer q.Stop(context.WithoutCancel(t.Context()))
	}
	testBroadcast(t, broadcastPair{a: a, b: b, ra: ra, rb: rb})
}

// TestRedisBroadcast: two instances on redis-server.
func TestRedisBroadcast(t *testing.T) {
	srv := testutil.StartRedis(t, testutil.RedisOptions{})
	c := RedisConnection{ConnectionString: srv.Addr()}
	ra, rb := newReceived(), newReceived()
	a := newTestRedis(t, "casta", c, &RedisOptions{OnBroadcast: ra.add})
	b := newTestRedis(t, "castb", c, &RedisOptions{OnBroadcast: rb.add})
	for _, r := range []*Redis{a, b} {
		require.NoError(t, r.Start(t.Context(), newStreams().deliver))
		defer r.Stop(context.WithoutCancel(t.Context()))
	}
	testBroadcast(t, broadcastPair{a: a, b: b, ra: ra, rb: rb})
}

func TestMemoryBroadcast(t *testing.T) {
	hub := NewHub()
	ra, rb := newReceived(), newReceived()
	a := NewMemory(hub, "casta", HoldOptions{}, nil)
	b := NewMemory(hub, "castb", HoldOptions{}, nil)
	a.OnBroadcast, b.OnBroadcast = ra.add, rb.add
	for _, m := range []*Memory{a, b} {
		require.NoError(t, m.Start(t.Context(), newStreams().deliver))
		defer m.Stop(t.Context())
	}
	testBroadcast(t, broadcastPair{a: a, b: b, ra: ra, rb: rb})
}

// timedReceiver notes when each broadcast arrives, by its text.
type timedReceiver struct {
	mu   sync.Mutex
	at   map[string]time.Time
	more chan struct{}
}

func newTimedReceiver() *timedReceiver {
	return &timedReceiver{at: map[string]time.Time{}, more: make(chan struct{}, 1)}
}

func (r *timedReceiver) add(w []byte) {
	r.mu.Lock()
	r.at[string(w)] = time.Now()
	r.mu.Unlock()
	select {
	case r.more <- struct{}{}:
	default:
	}
}

// arrival waits (bounded) for broadcast key.
func (r *timedReceiver) arrival(b *testing.B, key string) time.Time {
	deadline := time.After(30 * time.Second)
	for {
		r.mu.Lock()
		at, ok := r.at[key]
		r.mu.Unlock()
		if ok {
			return at
		}
		select {
		case <-r.more:
		case <-deadline:
			b.Fatalf("broadcast %s did not arrive", key)
		}
	}
}

// broadcastLatency broadcasts n changes from a, one after the other (each
// once the last arrived, then after gap to twice gap, at random: a fixed
// gap would fall in step with the receiver's polls), and reports p50 and
// p95 of the time from Broadcast until OnBroadcast at b.
func broadcastLatency(b *testing.B, a Broadcaster, rb *timedReceiver, n int, gap time.Duration) {
	lat := make([]time.Duration, 0, n)
	run := time.Now().UnixNano()
	for i := range n {
		key := fmt.Sprintf(`{"kind":"resourceUpdated","uri":"note://%d/%d"}`, run, i)
		start := time.Now()
		require.NoError(b, a.Broadcast(b.Context(), []byte(key)))
		lat = append(lat, rb.arrival(b, key).Sub(start))
		if gap > 0 {
			time.Sleep(gap + rand.N(gap)) // think time: the receiver goes idle
		}
	}
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
}

// BenchmarkBroadcastLatency measures, on Azurite and redis-server, how
// long a broadcast takes to reach the other instance: back to back (200)
// and after a silence of 2 to 4 s (20, not under -short).
func BenchmarkBroadcastLatency(b *testing.B) {
	for _, kind := range []string{"azurequeues", "redis"} {
		b.Run(kind, func(b *testing.B) {
			var a Broadcaster
			rb := newTimedReceiver()
			switch kind {
			case "azurequeues":
				az := testutil.StartAzurite(b, repoRoot(b))
				st := Storage{Name: "AzureWebJobsStorage", ConnectionString: az.ConnectionString()}
				qa, err := NewQueue("lata", st, nil)
				require.NoError(b, err)
				qb, err := NewQueue("latb", st, &QueueOptions{OnBroadcast: rb.add})
				require.NoError(b, err)
				for _, q := range []*Queue{qa, qb} {
					require.NoError(b, q.Start(b.Context(), newStreams().deliver))
					defer q.Stop(context.WithoutCancel(b.Context()))
				}
				a = qa
			case "redis":
				srv := testutil.StartRedis(b, testutil.RedisOptions{})
				c := RedisConnection{Name: "FUNCMCP_REDIS", ConnectionString: srv.Addr()}
				ra, err := NewRedis("lata", c, nil)
				require.NoError(b, err)
				rr, err := NewRedis("latb", c, &RedisOptions{OnBroadcast: rb.add})
				require.NoError(b, err)
				for _, r := range []*Redis{ra, rr} {
					require.NoError(b, r.Start(b.Context(), newStreams().deliver))
					defer r.Stop(context.WithoutCancel(b.Context()))
				}
				a = ra
			}
			b.Run("back-to-back", func(b *testing.B) {
				for b.Loop() {
					broadcastLatency(b, a, rb, 200, 0)
				}
			})
			if !testing.Short() {
				b.Run("after-2-4s-silence", func(b *testing.B) {
					for b.Loop() {
						broadcastLatency(b, a, rb, 20, 2*time.Second)
					}
				})
			}
		})
	}
}
