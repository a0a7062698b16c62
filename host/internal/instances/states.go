package instances

import (
	"fmt"
	"strings"

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

// SpentStates opens the record of used request states the instances
// share, as the settings say (see above): nil when they share none. done
// releases what it opened; sweep, when not nil, removes the expired
// states now and then.
func (s *Stores) SpentStates(backplaneKind string) (ledger mcp.StateLedger, sweep Sweeper, done func(), err error) {
	switch backplaneKind {
	case BackplaneRedis:
		rc, err := s.conns.Redis()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("opening the record of used request states: %w", err)
		}
		c, err := rc.NewClient()
		if err != nil {
			return nil, nil, nil, fmt.Errorf("opening the record of used request states: %w", err)
		}
		s.log.Info("input-required request states open once across the instances sharing the Redis server of " + SettingRedis)
		return tasks.NewRedisStates(c), nil, func() { _ = c.Close() }, nil
	}
	store, _ := s.cfg.Lookup(SettingTaskStore)
	taskTables := strings.ToLower(strings.TrimSpace(store)) == TaskStoreAzure
	if backplaneKind != BackplaneAzureQueues && !taskTables {
		return nil, nil, nil, nil
	}
	cs, ao, err := s.conns.Tables(false)
	if err != nil && taskTables {
		return nil, nil, nil, fmt.Errorf("opening the record of used request states in %s: %w", SettingStorage, err)
	}
	if err != nil || (cs != "" && !hasTables(cs)) {
		// The backplane's queues need no table: a connection that names
		// no table endpoint leaves each instance with its own record.
		s.log.Warn("input-required request states open once on each instance: the connection " + SettingStorage +
			" names no table endpoint to record them for every instance")
		return nil, nil, nil, nil
	}
	az, err := tasks.NewAzureStates(cs, ao)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("opening the record of used request states in %s: %w", SettingStorage, err)
	}
	s.log.Info("input-required request states open once across the instances sharing the table " + tasks.DefaultStateTable + " of " + SettingStorage)
	return az, az, func() {}, nil
}
