package host

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
)

// A 2026-07-28 request state (the sealed state of an input-required round)
// opens once. Each instance remembers the states that opened on it; where
// the instances share a store, they also record them there, so that a
// state opens once across all of them:
//
//   - with the redis backplane, in its Redis server: a key per state, set
//     only when missing (SET NX), expiring with the state;
//   - else with the Azure task store or the azurequeues backplane, in the
//     table DefaultStateTable of the storage account (AzureWebJobsStorage):
//     a row per state, inserted only when missing, removed by the sweep
//     once the state expired.
//
// Instances that share nothing but the key that seals the states each
// remember their own: a state could open once on each of them.

// redisStateKeyPrefix starts the Redis key of a request state that opened.
const redisStateKeyPrefix = "mcp-state:"

// redisStates is the record of used request states in a Redis server.
type redisStates struct{ c *redis.Client }

// Spend sets the state's key when it is missing, expiring with the state.
func (r redisStates) Spend(ctx context.Context, key string, expires time.Time) (bool, error) {
	err := r.c.SetArgs(ctx, redisStateKeyPrefix+key, "1", redis.SetArgs{Mode: "NX", ExpireAt: expires}).Err()
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, redis.Nil):
		return false, nil // the key is there: spent before
	}
	return false, fmt.Errorf("recording a used request state in Redis: %w", err)
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
