package host

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/funcmcp/funcmcp/host/internal/ids"
	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
)

// A 2026-07-28 request state (the sealed state of an input-required round)
// opens once. Each instance remembers the states that opened on it; where
// the instances share a store, they also record them there, so that a
// state opens once across all of them:
//
//   - with the redis backplane, in its Redis server: a key per state, set
//     only when missing (SET NX), expiring with the state, and the key of
//     the record's epoch (all in one hash slot, for Redis clusters);
//   - else with the Azure task store or the azurequeues backplane, in the
//     table DefaultStateTable of the storage account (AzureWebJobsStorage):
//     a row per state, inserted only when missing, removed by the sweep
//     once the state expired.
//
// Instances that share nothing but the key that seals the states each
// remember their own: a state could open once on each of them.

// The Redis keys of the record: a key per request state that opened, and
// the record's epoch (a random id, without expiry). The hash tag puts them
// in one slot, so that one script reads the epoch and sets a state's key.
const (
	redisStateKeyPrefix = "mcp-state:{mcp-state}:"
	redisStateEpochKey  = "mcp-state-epoch:{mcp-state}"
)

// redisStates is the record of used request states in a Redis server.
type redisStates struct{ c *redis.Client }

// redisEpochScript returns the record's epoch, setting it to ARGV[1]
// when it has none.
var redisEpochScript = redis.NewScript(`
local e = redis.call('GET', KEYS[1])
if e then return e end
redis.call('SET', KEYS[1], ARGV[1])
return ARGV[1]`)

// Epoch returns the record's epoch, making one when the server has none
// (it is new, or lost its data).
func (r redisStates) Epoch(ctx context.Context) (string, error) {
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
func (r redisStates) Spend(ctx context.Context, key, epoch string, expires time.Time) (bool, error) {
	if epoch == "" {
		return false, mcp.ErrEpochChanged // given where no record was shared
	}
	n, err := redisSpendScript.Run(ctx, r.c, []string{redisStateEpochKey, redisStateKeyPrefix + key},
		epoch, max(expires.Unix(), 1)).Int()
	switch {
	case err != nil:
		return false, fmt.Errorf("recording a used request state in Redis: %w", err)
	case n < 0:
		return false, mcp.ErrEpochChanged
	}
	return n == 1, nil // 0: the key is there, spent before
}

// hasTables reports whether a storage connection string reaches the
// account's tables: it names a table endpoint, or no endpoint at all (the
// account's are derived from its name), or the local emulator.
func hasTables(cs string) bool {
	endpoints := false
	for part := range strings.SplitSeq(cs, ";") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k = strings.ToLower(strings.TrimSpace(k)); {
		case k == "tableendpoint":
			return true
		case k == "usedevelopmentstorage" && strings.EqualFold(strings.TrimSpace(v), "true"):
			return true
		case strings.HasSuffix(k, "endpoint"):
			endpoints = true
		}
	}
	return !endpoints
}

// spentStates opens the record of used request states the instances
// share, as the settings say (see above): nil when they share none. done
// releases what it opened; sweep, when not nil, removes the expired
// states now and then.
func (h *Host) spentStates(backplaneKind string) (ledger mcp.StateLedger, sweep sweeper, done func(), err error) {
	switch backplaneKind {
	case BackplaneRedis:
		rc, err := h.redis()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("opening the record of used request states: %w", err)
		}
		c, err := rc.NewClient()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("opening the record of used request states: %w", err)
		}
		h.log.Info("input-required request states open once across the instances sharing the Redis server of " + SettingRedis)
		return redisStates{c}, nil, func() { _ = c.Close() }, nil
	}
	store, _ := h.cfg.Lookup(SettingTaskStore)
	taskTables := strings.ToLower(strings.TrimSpace(store)) == TaskStoreAzure
	if backplaneKind != BackplaneAzureQueues && !taskTables {
		return nil, nil, nil, nil
	}
	cs, ao, err := h.tableStorage(false)
	if err != nil && taskTables {
		return nil, nil, nil, fmt.Errorf("opening the record of used request states in %s: %w", SettingStorage, err)
	}
	if err != nil || (cs != "" && !hasTables(cs)) {
		// The backplane's queues need no table: a connection that names
		// no table endpoint leaves each instance with its own record.
		h.log.Warn("input-required request states open once on each instance: the connection " + SettingStorage +
			" names no table endpoint to record them for every instance")
		return nil, nil, nil, nil
	}
	s, err := tasks.NewAzureStates(cs, ao)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("opening the record of used request states in %s: %w", SettingStorage, err)
	}
	h.log.Info("input-required request states open once across the instances sharing the table " + tasks.DefaultStateTable + " of " + SettingStorage)
	return s, s, func() {}, nil
}
