package instances

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
)

// MCP tasks (2026-07-28, the io.modelcontextprotocol/tasks extension) for
// tools declared with a task support (metadata.KeyTask). The records live in
// a store every instance shares: the memory of this process for one
// instance, Azure Storage (a table, and blobs for large records) for
// several.
const (
	// SettingTaskStore chooses where task records live: TaskStoreMemory
	// (the default) or TaskStoreAzure, which several instances need to
	// share their tasks.
	SettingTaskStore = "FUNCMCP_TASK_STORE"
	// SettingTaskHeartbeat is how often an instance running a task
	// refreshes its record, as a Go duration ("5s"); a task whose record
	// went three heartbeats without one ran on an instance that stopped
	// and ends failed, or runs again elsewhere when its tool declares
	// reruns. Unset means mcp.DefaultTaskHeartbeat.
	SettingTaskHeartbeat = "FUNCMCP_TASK_HEARTBEAT"
	// SettingTaskTTL is the time to live of the tasks of tools that
	// suggest none, as a Go duration ("1h"): how long after its creation a
	// task stays readable (its work is stopped when it is still running
	// then). Unset means mcp.DefaultTaskTTL.
	SettingTaskTTL = "FUNCMCP_TASK_TTL"
)

// The bounds of SettingTaskHeartbeat: a beat shorter than the minimum
// would spend a storage write per task that often; one longer than the
// maximum would leave a stopped instance's tasks working for a quarter of
// an hour.
const (
	MinTaskHeartbeat = 10 * time.Millisecond
	MaxTaskHeartbeat = 5 * time.Minute
)

// Task stores, the values of SettingTaskStore.
const (
	TaskStoreMemory = "memory"
	TaskStoreAzure  = "azure"
)

// taskSweepEvery is how often expired task records are removed.
const taskSweepEvery = 10 * time.Minute

// Stores opens what the instances share beside the backplane, as the
// settings say: the store of MCP task records and the record of used
// request states (states.go), on the app's connections.
type Stores struct {
	cfg   *config.Config
	conns *Connections
	log   *slog.Logger
}

// NewStores returns the stores of the settings of cfg; nothing is opened
// before one is asked for.
func NewStores(cfg *config.Config, conns *Connections, log *slog.Logger) *Stores {
	return &Stores{cfg: cfg, conns: conns, log: log}
}

// Tasks opens the task store the settings ask for; the caller asks only
// when the app has tools that may run as tasks (else tasks are off). An
// Azure store is opened (its table and container created) here, within
// ctx.
func (s *Stores) Tasks(ctx context.Context, backplaneKind string) (*mcp.TaskOptions, error) {
	o := &mcp.TaskOptions{}
	for _, d := range []struct {
		setting  string
		dst      *time.Duration
		min, max time.Duration
	}{{SettingTaskHeartbeat, &o.Heartbeat, MinTaskHeartbeat, MaxTaskHeartbeat}, {SettingTaskTTL, &o.TTL, time.Millisecond, mcp.MaxTaskTTL}} {
		v, from := s.cfg.Lookup(d.setting)
		if v == "" {
			continue
		}
		t, err := time.ParseDuration(strings.TrimSpace(v))
		switch {
		case err != nil || t <= 0:
			return nil, fmt.Errorf("reading %s from %s: %q is not a positive duration such as \"5s\"", d.setting, from, v)
		case t < d.min:
			return nil, fmt.Errorf("reading %s from %s: %q is less than the minimum, %s", d.setting, from, v, d.min)
		case t > d.max:
			return nil, fmt.Errorf("reading %s from %s: %q is more than the maximum, %s", d.setting, from, v, d.max)
		}
		*d.dst = t
	}
	kind, from := s.cfg.Lookup(SettingTaskStore)
	kind = strings.ToLower(strings.TrimSpace(kind))
	if kind == "" {
		kind = TaskStoreMemory
		if backplaneKind != BackplaneMemory {
			s.log.Warn("MCP tasks are kept in this instance's memory: other instances cannot read them; set " +
				SettingTaskStore + "=" + TaskStoreAzure + " to keep them in Azure Storage")
		}
	}
	var l tasks.MemoryLimits
	for _, d := range []struct {
		setting string
		dst     *int64
	}{{tasks.SettingMaxTasks, &l.Tasks}, {tasks.SettingMaxTasksPerOwner, &l.TasksPerOwner},
		{tasks.SettingMaxResultBytes, &l.ResultBytes}, {tasks.SettingMaxResultBytesPerOwner, &l.ResultBytesPerOwner}} {
		v, from := s.cfg.Lookup(d.setting)
		if v == "" {
			continue
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("reading %s from %s: %q is not a positive whole number", d.setting, from, v)
		}
		*d.dst = n
	}
	switch kind {
	case TaskStoreMemory:
		o.Store = tasks.NewMemoryWith(nil, l)
	case TaskStoreAzure:
		cs, ao, err := s.conns.Tables(true)
		if err != nil {
			return nil, fmt.Errorf("the task store is %s (from %s): %w", TaskStoreAzure, from, err)
		}
		ao.Tasks, ao.TasksPerOwner = l.Tasks, l.TasksPerOwner
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		az, err := tasks.NewAzure(ctx, cs, ao)
		if err != nil {
			return nil, fmt.Errorf("opening the task store in %s: %w", SettingStorage, err)
		}
		o.Store = az
	default:
		return nil, fmt.Errorf("reading %s from %s: %q is not %q or %q", SettingTaskStore, from, kind, TaskStoreMemory, TaskStoreAzure)
	}
	return o, nil
}

// Sweeper is what Sweep sweeps: a task store, the used request states.
type Sweeper interface {
	Sweep(ctx context.Context, now time.Time) error
}

// Sweep removes expired task records (or used request states) of store
// now and then until ctx ends; a failure is logged at Warn, naming what.
func (s *Stores) Sweep(ctx context.Context, store Sweeper, what string) {
	t := time.NewTicker(taskSweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if err := store.Sweep(ctx, now); err != nil && ctx.Err() == nil {
				s.log.Warn("removing expired "+what+" failed", "error", err)
			}
		}
	}
}
