package host

import (
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/host/internal/telemetry"
	"github.com/funcmcp/funcmcp/metadata"
)

// Defaults of [Options].
const (
	DefaultAddr           = "127.0.0.1:7071"
	DefaultStartupTimeout = 30 * time.Second
	// DefaultCallTimeout is the Functions host's default functionTimeout
	// outside the Consumption plan.
	DefaultCallTimeout = 30 * time.Minute
	DefaultStopTimeout = 5 * time.Second

	DefaultDrainTimeout      = 10 * time.Second
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = 30 * time.Second
	DefaultIdleTimeout       = 120 * time.Second
	DefaultRestartWait       = 30 * time.Second
)

// Defaults of the bounds in [Options].
const (
	DefaultMaxCallsInFlight = 256
	// DefaultMaxRunningTasksPerClient bounds the task work one client
	// (owner) runs at once. The default of MaxRunningTasks is three quarters
	// of MaxCallsInFlight.
	DefaultMaxRunningTasksPerClient = 16
	DefaultMaxConnections           = 1024
	// DefaultMaxConnectionsPerAddress bounds the open connections of one
	// client address.
	DefaultMaxConnectionsPerAddress = 128
	DefaultMaxArgumentBytes         = 1 << 20
	DefaultMaxArgumentDepth         = 64
	DefaultMaxArgumentKeys          = 10000
	// MaxHeaderBytes bounds a request's header, as Kestrel's default
	// (32 KiB) bounds it under the Functions host: over it, 431. A legacy SSE
	// stream keeps its GET's headers for its life; a session token stays far
	// below it (its clientInfo is cut).
	MaxHeaderBytes = 32 << 10
)

// Defaults of the app folder bounds in [Options].
const (
	DefaultMaxFunctionFileBytes = metadata.DefaultMaxFunctionFileBytes
	DefaultMaxSchemaBytes       = binding.DefaultMaxSchemaBytes
	DefaultMaxSchemaDepth       = binding.DefaultMaxSchemaDepth
	DefaultSchemaCompileTime    = binding.DefaultSchemaCompileTime
)

// Defaults of the liveness probe.
const (
	DefaultProbeInterval = 10 * time.Second
	DefaultProbeTimeout  = 5 * time.Second
	DefaultProbeFailures = 3
)

// Options configures a [Host]. A nil *Options means defaults.
type Options struct {
	// ScriptRoot is the function app folder: host.json, local.settings.json
	// and one folder per function. "" means the current directory.
	ScriptRoot string
	// Addr is the listen address of Run; default 127.0.0.1:7071. Port 0
	// picks a free port.
	Addr string
	// Logger receives the host log; nil means slog.Default().
	Logger *slog.Logger
	// Output receives the console lines (the function list, load errors,
	// the worker's output and the endpoint line); nil means os.Stdout.
	Output io.Writer
	// WorkerURL, when set, is the base URL of a running worker: the host
	// starts no process and host.json needs no customHandler section.
	WorkerURL string
	// Functions, when not nil, are the app's functions as its function
	// folders would hold them (the function.json content emit-metadata
	// writes), sorted by name: the catalog is loaded from them and no
	// function folder under ScriptRoot is read. An app that serves itself
	// (package serve) passes its own.
	Functions []*metadata.Function
	// Schemas, with Functions, is the compiler the app built them with
	// (worker.Prepared.Schemas): when it checks the host's schema limits
	// (binding.Compiler.Shares), the catalog reads each schema text
	// through it, so a text the app has read is not read again.
	Schemas *binding.Compiler
	// WorkerHandler, when set, is the app's custom-handler HTTP handler
	// (worker.App.Handler) in this process: every invocation is served by
	// it directly, with no connection; the host starts no process and
	// host.json needs no customHandler section. A handler that runs tool
	// calls itself (metadata.LocalTools: a funcmcp app's, unless its
	// telemetry wraps it) gets each tools/call with no encoding either
	// way.
	WorkerHandler http.Handler

	// StartupTimeout bounds the wait for the worker to answer GET /;
	// default 30s.
	StartupTimeout time.Duration
	// CallTimeout bounds one tool invocation; 0 means host.json
	// functionTimeout, else DefaultCallTimeout (30m, the Functions host's
	// default). functionTimeout "-1" means no bound.
	CallTimeout time.Duration
	// StopTimeout is how long the worker has to exit after SIGTERM before it
	// is killed; default 5s.
	StopTimeout time.Duration
	// Environ is the base environment of the worker process; nil means
	// os.Environ().
	Environ []string
	// WorkerProcs is the GOMAXPROCS the worker process gets when neither
	// Environ nor local.settings.json Values set GOMAXPROCS; 0 (the
	// default) adds none. funchost sets it to share the CPUs with its
	// worker (see docs/configuration.md).
	WorkerProcs int

	// MasterKey and SystemKey are the function keys the MCP endpoints accept
	// unless host.json says webhookAuthorizationLevel Anonymous. "" means
	// FUNCHOST_MASTER_KEY / FUNCHOST_MCP_EXTENSION_KEY from the environment or
	// local.settings.json Values; when none is set, keys are generated once
	// and kept in <script root>/.funchost/keys.json.
	MasterKey string
	SystemKey string
	// SessionKey is the 32-byte AES-256-GCM key sealing session tokens;
	// hosts with the same key accept each other's sessions. nil means
	// WEBSITE_AUTH_ENCRYPTION_KEY (else CONTAINER_ENCRYPTION_KEY) from the
	// environment or local.settings.json, else a random key per process.
	SessionKey []byte
	// SessionLifetime is how long a session token is accepted; default 24h.
	SessionLifetime time.Duration
	// TaskHeartbeat, when not 0, overrides the FUNCMCP_TASK_HEARTBEAT
	// setting: how often an instance running an MCP task refreshes its
	// record (see SettingTaskHeartbeat).
	TaskHeartbeat time.Duration

	// MaxCallsInFlight bounds the tool calls running at once; a call over it
	// gets a JSON-RPC "busy" error (-32000). Default 256.
	MaxCallsInFlight int
	// MaxRunningTasks bounds the task work (MCP tasks, which outlive their
	// request) running at once among those calls, so that the other slots
	// stay for synchronous calls; it must be below MaxCallsInFlight.
	// MaxRunningTasksPerClient bounds one client's (owner's: its verified
	// access token's user or function key, else its address). Over them the task
	// gets a JSON-RPC "busy" error (-32000) naming the limit. Defaults:
	// three quarters of MaxCallsInFlight (192), and 16.
	MaxRunningTasks          int
	MaxRunningTasksPerClient int
	// MaxConnections bounds the open client connections, and
	// MaxConnectionsPerAddress those of one client address (its IP, any
	// port). At a bound a new connection closes an idle keep-alive one (its
	// own address's longest idle one at the address's bound; at the
	// server's, the longest idle one of the address holding the most); when
	// none is idle it is answered 503 naming the limit, and closed.
	// Defaults 1024 and 128.
	MaxConnections           int
	MaxConnectionsPerAddress int
	// MaxArgumentBytes, MaxArgumentDepth and MaxArgumentKeys bound the
	// arguments of tools/call and prompts/get and the context.arguments of
	// completion/complete (JSON size as sent, nesting, object keys), checked
	// before anything decodes them; over them: -32602.
	// Defaults 1 MiB, 64, 10000.
	MaxArgumentBytes int
	MaxArgumentDepth int
	MaxArgumentKeys  int
	// DrainTimeout is how long a stopping host lets running calls finish;
	// those still running then get a JSON-RPC error. Default 10s.
	DrainTimeout time.Duration
	// ReadHeaderTimeout, ReadTimeout and IdleTimeout bound reading a
	// request's header, reading its whole body, and an idle keep-alive
	// connection. Defaults 10s, 30s, 120s. A response must be written
	// within the call timeout plus one minute; long SSE streams of a call
	// are therefore allowed.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	IdleTimeout       time.Duration
	// ProbeInterval is how often the worker's liveness is probed (GET /);
	// ProbeTimeout bounds one probe; after ProbeFailures missed probes in a
	// row the worker (its process group) is killed and restarted. Defaults
	// 10s, 5s, 3; a negative ProbeInterval turns the probe off.
	ProbeInterval time.Duration
	ProbeTimeout  time.Duration
	ProbeFailures int
	// RestartWait bounds how long a call that finds no ready worker (it is
	// being started or restarted) waits for it before it fails: the longer
	// of RestartWait and StartupTimeout, within the call timeout. Default
	// 30s.
	RestartWait time.Duration

	// MaxFunctionFileBytes bounds a function.json (only regular files are
	// read); MaxSchemaBytes and MaxSchemaDepth bound each schema of a tool
	// trigger, and SchemaCompileTime the compilation of one tool's schemas.
	// A function or tool over them is refused at load. Defaults 1 MiB,
	// 256 KiB, 64, 5s.
	MaxFunctionFileBytes int
	MaxSchemaBytes       int
	MaxSchemaDepth       int
	SchemaCompileTime    time.Duration

	// AllowedHosts are host names that requests may name in their Host
	// header (and Origin) besides 127.0.0.1, localhost and [::1]; any other
	// gets 403 (DNS rebinding).
	AllowedHosts []string
	// AllowedOrigins are further origins (scheme://host[:port]) browsers
	// may call from; an Origin on an allowed host name is always allowed.
	AllowedOrigins []string

	// MaxChangesPerSecond bounds the changes the worker announces
	// (worker.NotifyResourceUpdated, NotifyListChanged) that reach the
	// clients: as many at once, then that many per second. Past it a
	// change is still taken and waits its turn, merged with a change of the
	// same resource or list that waits; past ten seconds of the rate (at
	// most MaxPendingChanges) distinct resources waiting, they become one
	// change of the resources list. Default DefaultMaxChangesPerSecond.
	MaxChangesPerSecond int

	// listenLimits, listenKeepAlive and listenWriteTimeout replace the
	// listener limits of the settings and the stream timings (tests).
	listenLimits                        *notify.Limits
	listenKeepAlive, listenWriteTimeout time.Duration
	// telemetry, when set, replaces the telemetry host.json starts: a
	// test's, recording in memory.
	telemetry *telemetry.Telemetry
	// restartDelay overrides the supervisor's first back-off step (tests).
	restartDelay time.Duration
	// compileDelay replaces deferredCompileDelay (tests).
	compileDelay time.Duration
}

// withDefaults returns a copy of opts (nil: the zero Options) with every
// unset field given its default. CallTimeout is left for New: its default
// comes from host.json.
func withDefaults(opts *Options) Options {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.ScriptRoot == "" {
		o.ScriptRoot = "."
	}
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Output == nil {
		o.Output = os.Stdout
	}
	if o.StartupTimeout <= 0 {
		o.StartupTimeout = DefaultStartupTimeout
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = DefaultStopTimeout
	}
	defaultInt(&o.MaxCallsInFlight, DefaultMaxCallsInFlight)
	defaultInt(&o.MaxRunningTasks, max(1, o.MaxCallsInFlight*3/4))
	defaultInt(&o.MaxRunningTasksPerClient, DefaultMaxRunningTasksPerClient)
	defaultInt(&o.MaxConnections, DefaultMaxConnections)
	defaultInt(&o.MaxConnectionsPerAddress, min(DefaultMaxConnectionsPerAddress, o.MaxConnections))
	defaultInt(&o.MaxArgumentBytes, DefaultMaxArgumentBytes)
	defaultInt(&o.MaxArgumentDepth, DefaultMaxArgumentDepth)
	defaultInt(&o.MaxArgumentKeys, DefaultMaxArgumentKeys)
	defaultDuration(&o.DrainTimeout, DefaultDrainTimeout)
	defaultDuration(&o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	defaultDuration(&o.ReadTimeout, DefaultReadTimeout)
	defaultDuration(&o.IdleTimeout, DefaultIdleTimeout)
	defaultDuration(&o.RestartWait, DefaultRestartWait)
	defaultInt(&o.MaxFunctionFileBytes, DefaultMaxFunctionFileBytes)
	defaultInt(&o.MaxSchemaBytes, DefaultMaxSchemaBytes)
	defaultInt(&o.MaxSchemaDepth, DefaultMaxSchemaDepth)
	defaultDuration(&o.SchemaCompileTime, DefaultSchemaCompileTime)
	if o.ProbeInterval == 0 {
		o.ProbeInterval = DefaultProbeInterval
	}
	defaultDuration(&o.ProbeTimeout, DefaultProbeTimeout)
	defaultInt(&o.ProbeFailures, DefaultProbeFailures)
	defaultInt(&o.MaxChangesPerSecond, DefaultMaxChangesPerSecond)
	return o
}

func defaultInt(v *int, d int) {
	if *v <= 0 {
		*v = d
	}
}

func defaultDuration(v *time.Duration, d time.Duration) {
	if *v <= 0 {
		*v = d
	}
}
