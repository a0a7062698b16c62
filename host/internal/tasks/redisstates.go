package tasks

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/funcmcp/funcmcp/host/internal/ids"
)

// With the redis backplane, a 2026-07-28 request state (the sealed state
// of an input-required round) opens once across the instances sharing its
// Redis server: a key per state, set only when missing (SET NX), expiring
// with the state, and the key of the record's epoch (all in one hash slot,
// for Redis clusters).

// The Redis keys of the record: a key per request state that opened, and
// the record's epoch (a random id, without expiry). The hash tag puts them
// in one slot, so that one script reads the epoch and sets a state's key.
const (
	redisStateKeyPrefix = "mcp-state:{mcp-state}:"
	redisStateEpochKey  = "mcp-state-epoch:{mcp-state}"
)

// RedisStates is the record of used request states in a Redis server.
type RedisStates struct{ c *redis.Client }

// NewRedisStates returns the record of used request states kept in the
// Redis server c reaches; c stays the caller's to close.
func NewRedisStates(c *redis.Client) RedisStates { return RedisStates{c} }

// redisEpochScript returns the record's epoch, setting it to ARGV[1]
// when it has none.
var redisEpochScript = redis.NewScript(`
local e = redis.call('GET', KEYS[1])
if e then return e end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]`)

// Epoch returns the record's epoch, making one when the server has none
// (it is new, or lost its data).
func (r RedisStates) Epoch(ctx context.Context) (string, error) {
	e, err := redisEpochScript.Run(ctx, r.c, []string{redisStateEpochKey}, ids.Random(ids.LowerAlnum, 16)).Text()
	if err != nil {
		return "", fmt.Errorf("reading the epoch of the used request states in Redis: %w", err)
	}
	return e, nil
}

// redisSpendScript refuses a state of another epoch than the record's
// (-1), else sets the state's key when it is missing (1), expiring with
// the state at ARGV[2] (Unix seconds); 0 when it is there.
var redisSpendScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
if redis.call('SET', KEYS[2], '1', 'NX', 'EXAT', ARGV[2]) then return 1 end
return 0`)

// Spend sets the state's key when it is missing, expiring with the state,
// while the record's epoch is epoch.
func (r RedisStates) Spend(ctx context.Context, key, epoch string, expires time.Time) (bool, error) {
	if epoch == "" {
		return false, ErrStateEpochChanged // given where no record was shared
	}
	n, err := redisSpendScript.Run(ctx, r.c, []string{redisStateEpochKey, redisStateKeyPrefix + key},
		epoch, max(expires.Unix(), 1)).Int()
	switch {
	case err != nil:
		return false, fmt.Errorf("recording a used request state in Redis: %w", err)
	case n < 0:
		return false, ErrStateEpochChanged
	}
	return n == 1, nil // 0: the key is there, spent before
}
