package host

import (
	"github.com/funcmcp/funcmcp/host/internal/announce"
	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/host/internal/instances"
	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/metadata"
)

// This file names what host exports of its settings and of the types its
// internal packages define: the app settings it reads, their values and
// bounds, the paths it serves, the method table.

// File names read from the script root.
const (
	HostFile          = config.HostFile
	LocalSettingsFile = config.LocalSettingsFile
)

// OutputValidation says what the host does with a tool result whose
// structuredContent does not match the tool's output schema, or whose
// content breaks the tool's declared content kinds (host.json
// extensions.mcp.outputValidation, overridden per tool by function.json
// outputValidation). The worker SDK reads the same setting.
type OutputValidation = metadata.OutputValidation

// The output validation modes.
const (
	// ValidationStrict turns a broken result into an isError result (the default).
	ValidationStrict = metadata.ValidationStrict
	// ValidationWarn delivers the result as it is and logs a warning.
	ValidationWarn = metadata.ValidationWarn
	// ValidationOff skips validation.
	ValidationOff = metadata.ValidationOff
)

// ConfigError is a problem with host.json, local.settings.json or the keys
// file: File, Key ("" for the whole file) and Err. Reach it with errors.As.
type ConfigError = config.Error

// AuthLevel is who may call the MCP endpoints
// (host.json extensions.mcp.system.webhookAuthorizationLevel).
type AuthLevel = config.AuthLevel

// Authorization levels.
const (
	// AuthAnonymous serves everyone.
	AuthAnonymous = config.AuthAnonymous
	// AuthSystem (the default) needs the mcp_extension system key or the
	// master key.
	AuthSystem = config.AuthSystem
	// AuthAdmin needs the master key.
	AuthAdmin = config.AuthAdmin
)

// App settings (environment variables, else local.settings.json Values)
// holding the keys.
const (
	// EnvMasterKey holds the master key.
	EnvMasterKey = auth.EnvMasterKey
	// EnvSystemKey holds the mcp_extension system key.
	EnvSystemKey = auth.EnvSystemKey
	// EnvSessionKey and EnvSessionKeyFallback hold the session token key
	// (64 hex digits or base64 of 32 bytes), the names the Functions host
	// reads.
	EnvSessionKey         = auth.EnvSessionKey
	EnvSessionKeyFallback = auth.EnvSessionKeyFallback
)

// KeysFile is where a host that found no configured key keeps the keys it
// generated, relative to the script root.
const KeysFile = auth.KeysFile

// Paths of the legacy HTTP+SSE transport.
const (
	SSEPath     = MCPPath + "/sse"
	MessagePath = MCPPath + "/message"
)

// App settings (environment variables, else local.settings.json Values)
// read for the legacy SSE transport.
const (
	// SettingBackplane chooses how instances share legacy SSE traffic:
	// "memory" (the default: the instances of one process),
	// "azurequeues" (Azure Storage Queues on the AzureWebJobsStorage
	// connection) or "redis" (the FUNCMCP_REDIS connection), for
	// instances in several processes or machines.
	SettingBackplane = instances.SettingBackplane
	// SettingStorage is the storage connection of the app: a connection
	// string, or identity-based settings AzureWebJobsStorage__accountName
	// (or __queueServiceUri and __blobServiceUri), __credential,
	// __clientId, __managedIdentityResourceId, __tenantId.
	SettingStorage = instances.SettingStorage
	// SettingRedis is the Redis connection of the redis backplane: a
	// connection string ("host:port,password=…,ssl=True" or a rediss://
	// URL), or FUNCMCP_REDIS__redisHostName, __principalId and
	// optionally __clientId for Microsoft Entra authentication.
	SettingRedis = instances.SettingRedis
	// SettingHeartbeat is how often an instance tells the others it is
	// alive ("15s", or a time span "00:00:15"); default 15s for
	// azurequeues, 5s for redis. Messages for an instance silent for three
	// heartbeats get 503 (it may be paused); for one silent for six, 400
	// (it is dead).
	SettingHeartbeat = instances.SettingHeartbeat
)

// Backplane kinds, the values of SettingBackplane.
const (
	BackplaneMemory      = instances.BackplaneMemory
	BackplaneAzureQueues = instances.BackplaneAzureQueues
	BackplaneRedis       = instances.BackplaneRedis
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
	SettingTaskStore = instances.SettingTaskStore
	// SettingTaskHeartbeat is how often an instance running a task
	// refreshes its record, as a Go duration ("5s"); a task whose record
	// went three heartbeats without one ran on an instance that stopped
	// and ends failed, or runs again elsewhere when its tool declares
	// reruns. Unset means mcp.DefaultTaskHeartbeat.
	SettingTaskHeartbeat = instances.SettingTaskHeartbeat
	// SettingTaskTTL is the time to live of the tasks of tools that
	// suggest none, as a Go duration ("1h"): how long after its creation a
	// task stays readable (its work is stopped when it is still running
	// then). Unset means mcp.DefaultTaskTTL.
	SettingTaskTTL = instances.SettingTaskTTL
)

// The bounds of SettingTaskHeartbeat: a beat shorter than the minimum
// would spend a storage write per task that often; one longer than the
// maximum would leave a stopped instance's tasks working for a quarter of
// an hour.
const (
	MinTaskHeartbeat = instances.MinTaskHeartbeat
	MaxTaskHeartbeat = instances.MaxTaskHeartbeat
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
	TaskStoreMemory = instances.TaskStoreMemory
	TaskStoreAzure  = instances.TaskStoreAzure
)

// Changes clients listen for (subscriptions/listen on 2026-07-28,
// resources/subscribe and the list_changed notifications before): the
// host keeps one hub of the listeners of this instance (see
// docs/configuration.md for its limits). A change reaches it through
// its Publish; the task store publishes every task state change itself.

// The settings of the listener limits (whole numbers).
const (
	// SettingListenersPerClient bounds the open listeners (listen streams
	// and session GET streams) of one client; default 64.
	SettingListenersPerClient = notify.SettingListenersPerClient
	// SettingListeners bounds the open listeners of all clients; default
	// 10,000.
	SettingListeners = notify.SettingListeners
	// SettingListenSubscriptions bounds the resource URIs and task ids one
	// listener follows (and the URIs one session subscribes to); default
	// 256.
	SettingListenSubscriptions = notify.SettingSubscriptions
	// SettingListenQueue bounds the notifications waiting for one
	// listener; default 64. A listener that falls further behind is ended.
	SettingListenQueue = notify.SettingQueue
	// SettingSubscribedSessionsPerClient bounds the legacy sessions of one
	// client whose resource subscriptions an instance keeps; default 256.
	SettingSubscribedSessionsPerClient = mcp.SettingSubscribedSessions
)

// The rate of the changes the app announces (see Options.MaxChangesPerSecond).
const (
	// DefaultMaxChangesPerSecond is how many changes per second the
	// worker's announcements reach the clients when
	// Options.MaxChangesPerSecond is 0 (burst: as many at once).
	DefaultMaxChangesPerSecond = announce.DefaultMaxChangesPerSecond
	// MaxPendingChanges bounds the distinct resources whose changes wait
	// for their turn past the rate: ten seconds of the rate, at most this
	// many. Past it, they are announced as one change of the resources
	// list.
	MaxPendingChanges = announce.MaxPendingChanges
)

// MethodSpec describes one MCP method the endpoint answers (an entry of
// metadata's method table, [metadata.MethodSpec]): its name, the
// revisions that have it, the params member naming its target, whether it
// may run as a task, and an example of valid params.
type MethodSpec = mcp.MethodSpec

// Methods returns every MCP method the endpoint answers, from the method
// table that routes them: whatever exercises every method (the hostile
// suite of tests/) reads it, so a method added to the table is covered
// without anyone listing it again.
func Methods() []MethodSpec { return mcp.Methods() }
