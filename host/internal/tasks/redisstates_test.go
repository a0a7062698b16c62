package tasks

import (
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// TestRedisStatesEpoch (issue 41, item 3): the Redis record of used
// request states makes its epoch once, whichever instances ask at once; a
// state opens once in its epoch, expiring with the state; once the server
// lost its data (FLUSHALL, as a restart without persistence), a state
// used before is refused instead of opening again, and the next epoch is
// a new one in which states open once.
func TestRedisStatesEpoch(t *testing.T) {
	srv := testutil.StartRedis(t, testutil.RedisOptions{})
	newClient := func() *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	a, b := NewRedisStates(newClient()), NewRedisStates(newClient())
	epochs := make([]string, 6)
	var wg sync.WaitGroup
	for i := range epochs {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			var err error
			epochs[i], err = s.Epoch(t.Context())
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	epoch := epochs[0]
	require.Len(t, epoch, 16)
	for _, e := range epochs {
		assert.Equal(t, epoch, e, "one epoch for all")
	}

	expires := time.Now().Add(time.Hour)
	ok, err := a.Spend(t.Context(), "used1", epoch, expires)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = b.Spend(t.Context(), "used1", epoch, expires)
	require.NoError(t, err)
	assert.False(t, ok, "spent before")
	ttl, err := a.c.TTL(t.Context(), redisStateKeyPrefix+"used1").Result()
	require.NoError(t, err)
	assert.InDelta(t, time.Hour.Seconds(), ttl.Seconds(), 60, "the key expires with the state")
	_, err = a.Spend(t.Context(), "other1", "someotherepoch00", expires)
	assert.ErrorIs(t, err, ErrStateEpochChanged, "a state of another epoch")
	_, err = a.Spend(t.Context(), "other2", "", expires)
	assert.ErrorIs(t, err, ErrStateEpochChanged, "a state given without a shared record")

	require.NoError(t, a.c.FlushAll(t.Context()).Err())
	_, err = b.Spend(t.Context(), "used1", epoch, expires)
	require.ErrorIs(t, err, ErrStateEpochChanged, "the state used before the data was lost is refused")
	next, err := b.Epoch(t.Context())
	require.NoError(t, err)
	assert.NotEqual(t, epoch, next, "a new epoch")
	e, err := a.Epoch(t.Context())
	require.NoError(t, err)
	assert.Equal(t, next, e)
	ok, err = a.Spend(t.Context(), "fresh1", next, expires)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, err = b.Spend(t.Context(), "fresh1", next, expires)
	require.NoError(t, err)
	assert.False(t, ok, "a state of the new epoch opens once")
}
