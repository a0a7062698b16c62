package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"golang.org/x/time/rate"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/host/internal/announce"
	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/catalog"
	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/host/internal/guard"
	"github.com/funcmcp/funcmcp/host/internal/instances"
	"github.com/funcmcp/funcmcp/host/internal/invoke"
	"github.com/funcmcp/funcmcp/host/internal/launch"
	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/host/internal/ratelimit"
	"github.com/funcmcp/funcmcp/host/internal/status"
	"github.com/funcmcp/funcmcp/host/internal/supervise"
	"github.com/funcmcp/funcmcp/host/internal/telemetry"
)

// Version is the host version sent to the worker in the
// X-Azure-Functions-HostVersion and User-Agent headers.
const Version = "4.0.0-funcmcp"

// MCPPath is where the MCP endpoint is served.
const MCPPath = "/runtime/webhooks/mcp"

// StatusPath is where the host status is served.
const StatusPath = "/admin/host/status"

// PingPath is the health probe: 200 while the host takes calls, 503 while
// it starts, stops or its worker keeps failing. It takes no key and no
// Host check (a probe names the instance's address), as the Azure
// Functions host's own /admin/host/ping.
const PingPath = "/admin/host/ping"

// State is the host's lifecycle state, as GET /admin/host/status reports it.
type State = status.State

// States.
const (
	StateStarting = status.StateStarting
	StateRunning  = status.StateRunning
	// StateUnhealthy: the worker kept failing; the host still serves, tool
	// calls get an isError result, and restarts go on with back-off.
	StateUnhealthy = status.StateUnhealthy
	StateStopping  = status.StateStopping
	StateStopped   = status.StateStopped
)

// FunctionStatus is one function of the app as GET /admin/host/status reports it.
type FunctionStatus = status.FunctionStatus

// TelemetryStatus says whether telemetry is on and where funchost and its
// worker export, as GET /admin/host/status reports it and funchost prints
// it at start; it holds no header and no credentials of an endpoint.
type TelemetryStatus = status.TelemetryStatus

// Status is the body of GET /admin/host/status.
type Status = status.Status

// Host serves a function app's MCP functions: its mcpToolTrigger tools,
// mcpResourceTrigger resources and resource templates, and
// mcpPromptTrigger prompts.
type Host struct {
	opts Options
	root string
	cfg  *config.Config
	cat  *catalog.Catalog
	// tools are what the endpoint resolves each tool to (toolRecords).
	tools   map[*catalog.Tool]*mcp.Resolved
	lists   *mcp.FunctionLists // resources, templates, prompts
	inv     *invoke.Client
	notify  *invoke.Hub
	log     *slog.Logger
	console *status.Console
	// board keeps the state, the worker's health and the problems met
	// while running, and answers GET /admin/host/status.
	board *status.Board
	// worker is what the worker is started with (package launch).
	worker  *launch.Worker
	handler http.Handler
	secrets *auth.Secrets
	// oauth asks for and validates access tokens; nil when
	// FUNCMCP_AUTH_ISSUER is not set.
	oauth *resourceServer
	// proxies are the front ends trusted to name their client
	// (SettingTrustedProxies); nil when none is.
	proxies *owner.Proxies
	// legacy is the legacy SSE transport and the backplane between
	// instances (package instances).
	legacy *instances.Legacy
	// endpoint is the MCP endpoint (tasks live in it); stopSweep ends the
	// removal of expired task records and used request states;
	// closeStates closes the record of used request states.
	endpoint    *mcp.Handler
	stopSweep   context.CancelFunc
	closeStates func()
	// early is the worker process New started (run.go); nil when there
	// is none to start (Options.WorkerURL, Options.WorkerHandler).
	early *earlyWorker
	calls *guard.Calls
	// tel is the host's OpenTelemetry; nil when off.
	tel *telemetry.Telemetry
	// telSummary says whether telemetry is on and where the host and the
	// worker export (the start line, the status).
	telSummary *telemetry.Summary
	// changes keeps this instance's listeners (subscriptions/listen, the
	// GET and legacy SSE streams) and hands them the changes published
	// (package notify; its limits are the settings named in settings.go).
	changes *notify.Hub

	running atomic.Bool
	closed  atomic.Bool
	// closeOnce makes Close idempotent.
	closeOnce sync.Once
	ready     chan struct{}
	addr      atomic.Pointer[string]
	// conns is the listener of the open connections, set by Run before
	// ready closes.
	conns *guard.Listener

	// announced takes the changes the app announces (package announce);
	// changeSink, when set (tests), gets each of them in place of the hub.
	announced  *announce.Channel
	changeSink func(notify.Change)
}

// New loads the app under opts.ScriptRoot: host.json, local.settings.json
// and every function. A tool that fails to load is logged and not served;
// the others still are. New fails only when the app as a whole cannot be
// served (no host.json, a bad configuration, an unreadable script root).
// Unless the worker is external (Options.WorkerURL) or in this process
// (Options.WorkerHandler), New also starts the worker process, before it
// loads the functions; Run waits for it, and Close stops it when the host
// does not run.
func New(opts *Options) (*Host, error) {
	o := withDefaults(opts)
	if o.WorkerHandler != nil {
		o.WorkerURL = inProcessWorker // no process to start, none to wait for
	}
	root, err := filepath.Abs(o.ScriptRoot)
	if err != nil {
		return nil, fmt.Errorf("resolving the script root: %w", err)
	}
	cfg, err := config.Load(root)
	if err != nil {
		return nil, fmt.Errorf("loading the host configuration: %w", err)
	}
	if o.MaxRunningTasks >= o.MaxCallsInFlight && o.MaxCallsInFlight > 1 {
		return nil, fmt.Errorf("checking the limits: MaxRunningTasks (%d) must be below MaxCallsInFlight (%d), so that slots stay for synchronous calls",
			o.MaxRunningTasks, o.MaxCallsInFlight)
	}
	if w := cfg.WorkerRuntimeWarning(); w != "" {
		o.Logger.Warn("host: " + w)
	}
	for _, w := range cfg.Warnings {
		o.Logger.Warn(w)
	}
	if cfg.Worker == nil && o.WorkerURL == "" {
		return nil, fmt.Errorf("loading the host configuration: %w", &ConfigError{
			File: filepath.Join(root, HostFile), Key: "customHandler",
			Err: errors.New("missing: host.json must describe the custom handler (customHandler.description.defaultExecutablePath)"),
		})
	}
	if o.CallTimeout <= 0 {
		switch {
		case cfg.FunctionTimeout > 0:
			o.CallTimeout = cfg.FunctionTimeout
		case cfg.FunctionTimeout < 0:
			o.CallTimeout = 0 // unbounded
		default:
			o.CallTimeout = DefaultCallTimeout
		}
	}
	sec, err := auth.Resolve(&auth.Given{MasterKey: o.MasterKey, SystemKey: o.SystemKey, SessionKey: o.SessionKey}, root, cfg)
	if err != nil {
		return nil, fmt.Errorf("loading the host keys: %w", err)
	}
	lim := &catalog.Limits{
		FileBytes:     int64(o.MaxFunctionFileBytes),
		Schema:        binding.Limits{SchemaBytes: o.MaxSchemaBytes, SchemaDepth: o.MaxSchemaDepth, CompileTime: o.SchemaCompileTime},
		ArgumentBytes: o.MaxArgumentBytes, ArgumentDepth: o.MaxArgumentDepth, ArgumentKeys: o.MaxArgumentKeys,
	}
	setting := func(name string) (string, bool) {
		v, from := cfg.Lookup(name)
		return v, from != ""
	}
	// Telemetry, the listeners' hub and the change channel come before the
	// functions: the worker's environment names the first and the last,
	// and the worker starts now (run.go), before the functions load.
	limits, err := notify.LimitsFromSettings(cfg.Lookup)
	if err != nil {
		return nil, fmt.Errorf("loading the listener limits: %w", err)
	}
	if o.listenLimits != nil {
		limits = *o.listenLimits
	}
	if strings.EqualFold(cfg.TelemetryMode, telemetry.ModeOpenTelemetry) {
		if err := otelSettings(cfg.Values); err != nil {
			return nil, fmt.Errorf("starting telemetry: %w", err)
		}
	}
	tel, err := telemetry.New(context.Background(), cfg.TelemetryMode, "funchost", o.Logger)
	if err != nil {
		return nil, fmt.Errorf("starting telemetry: %w", err)
	}
	if o.telemetry != nil {
		_ = tel.Shutdown(context.Background())
		tel = o.telemetry
	}
	// With telemetry on, a line logged under a request's context carries
	// its trace_id and span_id.
	o.Logger = tel.Logger(o.Logger)
	h := &Host{
		tel:     tel,
		secrets: sec,
		calls: guard.NewCalls(o.MaxCallsInFlight, guard.TaskLimits{
			Limit:           owner.Limit{PerOwner: int64(o.MaxRunningTasksPerClient), Global: int64(o.MaxRunningTasks)},
			PerOwnerSetting: "MaxRunningTasksPerClient (--max-running-tasks-per-client)",
			GlobalSetting:   "MaxRunningTasks (--max-running-tasks)",
		}),
		opts:    o,
		root:    root,
		cfg:     cfg,
		notify:  invoke.NewHub(o.Logger, MaxNotificationsPerCall),
		log:     o.Logger,
		console: status.NewConsole(o.Output),
		ready:   make(chan struct{}),
	}
	h.changes = notify.NewHub(limits, h.log)
	h.announced = announce.New(h.log, rate.NewLimiter(rate.Limit(o.MaxChangesPerSecond), o.MaxChangesPerSecond), h.publishAnnounced)
	var workerOut io.Writer = h.console
	workerLog := o.Logger
	var g *gate
	if o.WorkerURL == "" {
		g = &gate{}
		workerOut, workerLog = gatedWriter{g, h.console}, slog.New(gatedHandler{g, o.Logger.Handler()})
	}
	h.worker = launch.New(&launch.Options{Root: root, Config: cfg, Environ: o.Environ, Procs: o.WorkerProcs, HostPort: addrPort(o.Addr),
		Telemetry: tel, Changes: h.announced.Offer, Output: workerOut, Logger: workerLog,
		StartupTimeout: o.StartupTimeout, StopTimeout: o.StopTimeout,
		Probe: supervise.Probe{Interval: o.ProbeInterval, Timeout: o.ProbeTimeout, Failures: o.ProbeFailures}})
	if g != nil {
		h.early = h.startWorker(g)
	}
	// fail stops what New started, once the host exists: the worker, the
	// change channel, telemetry.
	fail := func(err error) (*Host, error) {
		if h.early != nil {
			h.early.abandon()
		}
		h.announced.Close()
		_ = h.tel.Shutdown(context.Background())
		return nil, err
	}
	var cat *catalog.Catalog
	if o.Functions != nil {
		cat, err = catalog.FromFunctions(root, o.Functions, lim, o.Schemas, setting)
	} else {
		cat, err = catalog.Load(root, lim, setting)
	}
	if err != nil {
		return fail(fmt.Errorf("loading functions: %w", err))
	}
	h.cat, h.tools, h.lists = cat, toolRecords(cat), functionLists(cat)
	where := launch.Started
	switch {
	case o.WorkerHandler != nil:
		where = launch.InProcess
	case o.WorkerURL != "":
		where = launch.External
	}
	h.telSummary = h.worker.Summarize(where)
	h.board = status.NewBoard(cat, root, h.telSummary, o.Logger, h.console, func() { h.inv.Wake() })
	if err := h.tel.Observe(func() (int64, int64) { return int64(h.calls.InFlight()), h.calls.TasksRunning() }); err != nil {
		return fail(fmt.Errorf("starting telemetry: %w", err))
	}
	// A call waits for a starting worker as long as its start may take.
	h.inv = invoke.NewClient(&invoke.Options{HostVersion: Version, Timeout: o.CallTimeout, RestartWait: max(o.RestartWait, o.StartupTimeout),
		MaxCalls: o.MaxCallsInFlight, Unhealthy: h.board.Reason, Trace: h.tel.InvokeTrace(), Local: o.WorkerHandler})
	if o.WorkerURL != "" {
		h.inv.SetWorker(o.WorkerURL)
		h.board.Set(StateRunning)
	}
	for _, e := range cat.Failures() {
		h.board.LogLoadFailure(e)
	}
	if h.proxies, err = h.loadProxies(); err != nil {
		return fail(fmt.Errorf("loading the trusted proxies: %w", err))
	}
	if h.oauth, err = h.newResourceServer(); err != nil {
		return fail(fmt.Errorf("loading the authorization settings: %w", err))
	}
	h.warnUnguarded()
	if h.handler, err = h.routes(); err != nil {
		return fail(fmt.Errorf("setting up the MCP endpoints: %w", err))
	}
	return h, nil
}

func (h *Host) routes() (http.Handler, error) {
	r := chi.NewRouter()
	// Before anything reads a header: the client's identity headers go,
	// and the client address is named (edge.go).
	r.Use(h.edge)
	conns := instances.NewConnections(h.cfg)
	var err error
	if h.legacy, err = instances.NewLegacy(h.cfg, conns, h.secrets.Sealer, h.log, h.tel); err != nil {
		return nil, err
	}
	// The links of the chain, outermost first: telemetry sees what the
	// rate limit refuses.
	limiter, err := ratelimit.Load(h.cfg.Lookup)
	if err != nil {
		return nil, err
	}
	opts := &mcp.Options{
		ServerInfo:      mcp.Implementation{Name: h.cfg.ServerName, Version: h.cfg.ServerVersion},
		Instructions:    h.cfg.Instructions,
		Logger:          h.log,
		Sealer:          h.secrets.Sealer,
		SessionLifetime: h.opts.SessionLifetime,
		InstanceID:      h.legacy.InstanceID(),
		ForwardResponse: h.legacy.ForwardResponse,
		RequestID:       h.legacy.RequestID,
		CheckArguments:  h.cat.CheckRawArguments,
		Middleware:      slices.Concat(h.tel.Middleware(), limiter.Middleware(), h.scopes()),
		Notify:          h.changes,

		ListenKeepAlive:    h.opts.listenKeepAlive,
		ListenWriteTimeout: h.opts.listenWriteTimeout,
	}
	// The relay of changes between instances: a backplane that can carry
	// them relays this instance's changes, and hands what it receives from
	// the others to the listeners here.
	if relay := h.legacy.Relay(); relay != nil {
		h.changes.SetRelay(relay)
		h.legacy.ReceiveChanges(func(wire []byte) {
			if err := h.changes.Receive(wire); err != nil {
				h.log.Warn("A change relayed by another instance was dropped", "error", err)
			}
		})
	}
	stores := instances.NewStores(h.cfg, conns, h.log)
	if hasTaskTools(h.cat) {
		if opts.Tasks, err = stores.Tasks(context.Background(), h.legacy.Kind()); err != nil {
			return nil, err
		}
	}
	if h.opts.TaskHeartbeat > 0 && opts.Tasks != nil {
		opts.Tasks.Heartbeat = h.opts.TaskHeartbeat
	}
	if h.tel != nil && opts.Tasks != nil {
		opts.Tasks.Traceparent = h.tel.Traceparent
		opts.Tasks.Telemetry = taskRuns{h.tel}
	}
	if opts.SubscribedSessions, err = notify.PerOwnerFromSetting(h.cfg.Lookup, SettingSubscribedSessionsPerClient); err != nil {
		return nil, err
	}
	var sweepStates instances.Sweeper
	if opts.SpentStates, sweepStates, h.closeStates, err = stores.SpentStates(h.legacy.Kind()); err != nil {
		return nil, err
	}
	endpoint := mcp.NewHandler(h.mcpServer(), opts)
	h.endpoint = endpoint
	if opts.Tasks != nil || sweepStates != nil {
		ctx, stop := context.WithCancel(context.Background())
		h.stopSweep = stop
		if opts.Tasks != nil {
			go stores.Sweep(ctx, opts.Tasks.Store, "MCP tasks")
		}
		if sweepStates != nil {
			go stores.Sweep(ctx, sweepStates, "used request states")
		}
	}
	if err = h.legacy.Attach(opts, endpoint); err != nil {
		return nil, err
	}
	if h.oauth != nil {
		// The protected resource metadata is public and readable from any
		// origin (RFC 9728, MCP authorization): outside the Origin check.
		meta := http.HandlerFunc(h.oauth.guard.ServeMetadata)
		for _, p := range []string{"", MCPPath, SSEPath, MessagePath} {
			r.Handle(MetadataPath+p, meta)
		}
	}
	r.Method(http.MethodGet, PingPath, http.HandlerFunc(h.board.Ping))
	// Every other endpoint is behind the one Host and Origin check; the
	// MCP endpoints behind the access token check (when asked for), then
	// the function key.
	// With telemetry on, every request of these is in its client's trace
	// and its refusal counted (telemetry.HTTP); sessions are measured.
	r.Group(func(r chi.Router) {
		r.Use(h.tel.HTTP)
		r.Use(guard.New(h.opts.AllowedHosts, h.opts.AllowedOrigins).Check)
		r.Handle(MCPPath, h.protect(h.secrets.RequireKey(guard.RequireJSON(h.tel.Sessions(endpoint, endpoint.Session)))))
		r.Handle(SSEPath, h.protect(h.secrets.RequireKey(h.tel.Stream(http.HandlerFunc(h.legacy.SSE().ServeStream)))))
		r.Handle(MessagePath, h.protect(h.secrets.RequireKey(guard.RequireJSON(http.HandlerFunc(h.legacy.SSE().ServeMessage)))))
		r.Method(http.MethodGet, StatusPath, h.secrets.RequireKey(h.board))
	})
	return r, nil
}

// Handler returns the host's HTTP handler: the MCP endpoint at
// /runtime/webhooks/mcp, the legacy SSE endpoints, GET /admin/host/status
// and GET /admin/host/ping. A Host used only through Handler is closed with
// [Host.Close].
func (h *Host) Handler() http.Handler { return h.handler }

// Close stops what New and the handler started: the listener of the
// worker notification channel (started on first use), the idle
// connections to the worker and the open legacy SSE streams. Run closes
// the Host when it returns; a Host used only through [Host.Handler] must be
// closed by its user. Close is safe to call more than once, concurrently,
// and after Run; a closed Host does not run. It returns nil.
func (h *Host) Close() error {
	h.closeOnce.Do(func() {
		h.closed.Store(true)
		if h.early != nil {
			h.early.abandon() // unless Run has it
		}
		if h.oauth != nil {
			h.oauth.stop()
		}
		if h.stopSweep != nil {
			h.stopSweep()
		}
		if h.closeStates != nil {
			h.closeStates()
		}
		h.stopTasks()
		h.changes.Close()
		h.notify.Close()
		h.announced.Close()
		h.inv.Close()
		h.legacy.SSE().Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := h.tel.Shutdown(ctx); err != nil {
			h.log.Warn("telemetry: flushing at close", "error", err)
		}
		cancel()
	})
	return nil
}

// stopTasks ends the tasks running here failed (the host stopped), their
// records written (within 10 s) before the worker connections go. It may be
// called more than once.
func (h *Host) stopTasks() {
	if h.endpoint == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	h.endpoint.StopTasks(ctx)
}

// Ready is closed once Run serves and the worker is ready.
func (h *Host) Ready() <-chan struct{} { return h.ready }

// Endpoint returns the MCP endpoint URL once Run listens, else "".
func (h *Host) Endpoint() string {
	if a := h.addr.Load(); a != nil {
		return "http://" + *a + MCPPath
	}
	return ""
}

// Status reports the host's state and what it serves.
func (h *Host) Status() *Status { return h.board.Report() }

// publishAnnounced passes a change the app announced on to the clients that
// listen: to the listeners' hub, or to changeSink when a test set one. It
// returns what the hub will say of the change's relay to the other
// instances (notify.Hub.PublishTracked); nil when there is no hub.
func (h *Host) publishAnnounced(c notify.Change) <-chan error {
	switch {
	case h.changeSink != nil:
		h.changeSink(c)
	case h.changes != nil:
		return h.changes.PublishTracked(c)
	}
	return nil
}

// VerifyKey reports whether r may call the MCP endpoints: it carries the
// mcp_extension system key or the master key (always true when the app is
// Anonymous).
func (h *Host) VerifyKey(r *http.Request) bool { return h.secrets.Verify(r) }

// hasTaskTools reports whether any tool of cat may run as a task.
func hasTaskTools(cat *catalog.Catalog) bool {
	for _, t := range cat.Tools() {
		if t.Binding.Trigger != nil && t.Binding.Trigger.Task != nil {
			return true
		}
	}
	return false
}

// otelSettings makes the OTEL_* settings of local.settings.json Values
// part of funchost's environment, where the OpenTelemetry SDK reads them,
// as func start makes Values the environment of its host: a variable the
// environment already sets (non-empty) wins. The worker gets the Values
// with its environment anyway.
func otelSettings(values []config.Setting) error {
	for _, v := range values {
		if !strings.HasPrefix(v.Key, "OTEL_") || v.Value == "" {
			continue
		}
		if cur, ok := os.LookupEnv(v.Key); ok && cur != "" {
			continue
		}
		if err := os.Setenv(v.Key, v.Value); err != nil {
			return fmt.Errorf("setting %s from %s: %w", v.Key, config.LocalSettingsFile, err)
		}
	}
	return nil
}

// inProcessWorker is the worker's base URL when it is a handler in this
// process (Options.WorkerHandler): the invoke client serves every call
// through the handler, and never dials it.
const inProcessWorker = "http://in-process.invalid"

// InProcessSettings returns what an app serving in this process
// (Options.WorkerHandler) reads from its environment, as "KEY=VALUE"
// entries, in two parts: values are the local.settings.json Values (but
// the host's keys, which a worker never gets), which the environment may
// override as it does the host's settings; own are the host's own, which
// it always sets: where to announce changes (the host's change channel,
// started now; none once the host is closed) and, with the host's
// telemetry off, OTEL_SDK_DISABLED=true, as funchost gives its worker.
// Package serve puts them in the process environment.
func (h *Host) InProcessSettings() (values, own []string) {
	vs, os := h.worker.InProcess()
	for _, v := range vs {
		values = append(values, v.Key+"="+v.Value)
	}
	for _, v := range os {
		own = append(own, v.Key+"="+v.Value)
	}
	return values, own
}

// addrPort is the port of a host:port address; 0 when it has none (or
// asks for an ephemeral one).
func addrPort(addr string) int {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return 0
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return 0
	}
	return n
}
