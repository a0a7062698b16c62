package host

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/metadata"
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

// The limits of the memory task store (see docs/configuration.md), as
// whole numbers: kept tasks in all and per client, bytes of kept results in
// all and per client. A client is an owner (package owner): its verified
// access token's user or function key, else its address.
const (
	SettingTaskMaxKept              = tasks.SettingMaxTasks
	SettingTaskMaxKeptPerClient     = tasks.SettingMaxTasksPerOwner
	SettingTaskResultBytes          = tasks.SettingMaxResultBytes
	SettingTaskResultBytesPerClient = tasks.SettingMaxResultBytesPerOwner
)

// Task stores, the values of SettingTaskStore.
const (
	TaskStoreMemory = "memory"
	TaskStoreAzure  = "azure"
)

// taskSweepEvery is how often expired task records are removed.
const taskSweepEvery = 10 * time.Minute

// taskSupport gives the MCP endpoint the task declaration of a tool.
func (h *Host) taskSupport(name string) *metadata.TaskSupport {
	t := h.cat.Lookup(name)
	if t == nil || t.Binding.Trigger == nil {
		return nil
	}
	return t.Binding.Trigger.Task
}

// hasTaskTools reports whether any tool of the app may run as a task.
func (h *Host) hasTaskTools() bool {
	for _, t := range h.cat.Tools() {
		if t.Binding.Trigger != nil && t.Binding.Trigger.Task != nil {
			return true
		}
	}
	return false
}

// taskOptions opens the task store the settings ask for, when the app has
// tools that may run as tasks (nil otherwise: tasks are off). An Azure
// store is opened (its table and container created) here, within ctx.
func (h *Host) taskOptions(ctx context.Context, backplaneKind string) (*mcp.TaskOptions, error) {
	if !h.hasTaskTools() {
		return nil, nil
	}
	o := &mcp.TaskOptions{}
	for _, d := range []struct {
		setting  string
		dst      *time.Duration
		min, max time.Duration
	}{{SettingTaskHeartbeat, &o.Heartbeat, MinTaskHeartbeat, MaxTaskHeartbeat}, {SettingTaskTTL, &o.TTL, time.Millisecond, mcp.MaxTaskTTL}} {
		v, from := h.cfg.Lookup(d.setting)
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
	kind, from := h.cfg.Lookup(SettingTaskStore)
	kind = strings.ToLower(strings.TrimSpace(kind))
	if kind == "" {
		kind = TaskStoreMemory
		if backplaneKind != BackplaneMemory {
			h.log.Warn("MCP tasks are kept in this instance's memory: other instances cannot read them; set " +
				SettingTaskStore + "=" + TaskStoreAzure + " to keep them in Azure Storage")
		}
	}
	var l tasks.MemoryLimits
	for _, d := range []struct {
		setting string
		dst     *int64
	}{{tasks.SettingMaxTasks, &l.Tasks}, {tasks.SettingMaxTasksPerOwner, &l.TasksPerOwner},
		{tasks.SettingMaxResultBytes, &l.ResultBytes}, {tasks.SettingMaxResultBytesPerOwner, &l.ResultBytesPerOwner}} {
		v, from := h.cfg.Lookup(d.setting)
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
		cs, ao, err := h.tableStorage(true)
		if err != nil {
			return nil, fmt.Errorf("the task store is %s (from %s): %w", TaskStoreAzure, from, err)
		}
		ao.Tasks, ao.TasksPerOwner = l.Tasks, l.TasksPerOwner
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		s, err := tasks.NewAzure(ctx, cs, ao)
		if err != nil {
			return nil, fmt.Errorf("opening the task store in %s: %w", SettingStorage, err)
		}
		o.Store = s
	default:
		return nil, fmt.Errorf("reading %s from %s: %q is not %q or %q", SettingTaskStore, from, kind, TaskStoreMemory, TaskStoreAzure)
	}
	return o, nil
}

// tableStorage reads the storage connection (SettingStorage) of the Azure
// tables: a connection string, or the endpoints (the blob endpoint too
// when blobs) and credential of an identity-based connection.
func (h *Host) tableStorage(blobs bool) (string, *tasks.AzureOptions, error) {
	sc, err := h.cfg.Storage(SettingStorage)
	if err != nil {
		return "", nil, err
	}
	ao := &tasks.AzureOptions{TableURL: sc.TableServiceURI, BlobURL: sc.BlobServiceURI}
	if sc.ConnectionString != "" {
		return sc.ConnectionString, ao, nil
	}
	if sc.TableServiceURI == "" || (blobs && sc.BlobServiceURI == "") {
		need := "__tableServiceUri"
		if blobs {
			need = "__tableServiceUri and " + SettingStorage + "__blobServiceUri"
		}
		return "", nil, fmt.Errorf("the identity-based connection %s needs %s__accountName, or %s%s", SettingStorage, SettingStorage, SettingStorage, need)
	}
	if ao.Credential, err = tokenCredential(SettingStorage, sc.Identity); err != nil {
		return "", nil, err
	}
	return "", ao, nil
}

// sweeper is what sweepTasks sweeps: a task store, the used request states.
type sweeper interface {
	Sweep(ctx context.Context, now time.Time) error
}

// sweepTasks removes expired task records (or used request states) now
// and then until ctx ends.
func (h *Host) sweepTasks(ctx context.Context, store sweeper, what string) {
	t := time.NewTicker(taskSweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if err := store.Sweep(ctx, now); err != nil && ctx.Err() == nil {
				h.log.Warn("removing expired "+what+" failed", "error", err)
			}
		}
	}
}
