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
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/metadata"
)

// Version is the host version sent to the worker in the
// X-Azure-Functions-HostVersion and User-Agent headers.
const Version = "4.0.0-funcmcp"

// MCPPath is where the MCP endpoint is served.
const MCPPath = "/runtime/webhooks/mcp"

// StatusPath is where the host status is served.
const StatusPath = "/admin/host/status"

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

	// MaxCallsInFlight bounds the tool calls running at once; a call over it
	// gets a JSON-RPC "busy" error (-32000). Default 256.
	MaxCallsInFlight int
	// MaxConnections bounds the open client connections; one over it is
	// answered 503 and closed. Default 1024.
	MaxConnections int
	// MaxArgumentBytes, MaxArgumentDepth and MaxArgumentKeys bound a call's
	// arguments (total JSON size, nesting, object keys); over them: -32602.
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
	// RestartWait bounds how long a call that finds no worker (it is being
	// restarted) waits for the new one before it fails. Default 30s.
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
}

// State is the host's lifecycle state, as GET /admin/host/status reports it.
type State string

// States.
const (
	StateStarting State = "Starting"
	StateRunning  State = "Running"
	// StateUnhealthy: the worker kept failing; the host still serves, tool
	// calls get an isError result, and restarts go on with back-off.
	StateUnhealthy State = "Unhealthy"
	StateStopping  State = "Stopping"
	StateStopped   State = "Stopped"
)

// Status is the body of GET /admin/host/status.
type Status struct {
	State       State            `json:"state"`
	Reason      string           `json:"reason,omitempty"` // why the state is Unhealthy
	ToolsServed int              `json:"toolsServed"`
	ToolsFailed int              `json:"toolsFailed"`
	Functions   []FunctionStatus `json:"functions"`
	Errors      []string         `json:"errors"`
}

// Host serves a function app's mcpToolTrigger functions as MCP tools.
type Host struct {
	opts    Options
	root    string
	cfg     *config
	reg     *registry
	inv     *invoker
	notify  *notifyHub
	log     *slog.Logger
	console *console
	handler http.Handler
	secrets *secrets
	limits  *limits
	health  health
	legacy  *legacy
	// restartDelay overrides the supervisor's first back-off step (tests).
	restartDelay time.Duration
	// drain is cancelled when a stopping host stops waiting for calls.
	drain     context.Context
	stopDrain context.CancelFunc

	state   atomic.Value // State
	running atomic.Bool
	ready   chan struct{}
	addr    atomic.Pointer[string]

	mu         sync.Mutex
	liveErrors []string // the latest problems met while running (worker exits)
}

// New loads the app under opts.ScriptRoot: host.json, local.settings.json
// and every function. A tool that fails to load is logged and not served;
// the others still are. New fails only when the app as a whole cannot be
// served (no host.json, a bad configuration, an unreadable script root).
func New(opts *Options) (*Host, error) {
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
	defaultInt(&o.MaxConnections, DefaultMaxConnections)
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
	root, err := filepath.Abs(o.ScriptRoot)
	if err != nil {
		return nil, fmt.Errorf("resolving the script root: %w", err)
	}
	cfg, err := loadConfig(root)
	if err != nil {
		return nil, fmt.Errorf("loading the host configuration: %w", err)
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
	sec, err := resolveSecrets(&o, root, cfg)
	if err != nil {
		return nil, fmt.Errorf("loading the host keys: %w", err)
	}
	reg, err := loadRegistry(root, &appLimits{fileBytes: int64(o.MaxFunctionFileBytes), schema: binding.Limits{
		SchemaBytes: o.MaxSchemaBytes, SchemaDepth: o.MaxSchemaDepth, CompileTime: o.SchemaCompileTime}})
	if err != nil {
		return nil, fmt.Errorf("loading functions: %w", err)
	}
	h := &Host{
		secrets: sec,
		limits:  newLimits(&o),
		opts:    o,
		root:    root,
		cfg:     cfg,
		reg:     reg,
		inv:     newInvoker(Version, o.CallTimeout, o.RestartWait, o.MaxCallsInFlight),
		notify:  newNotifyHub(o.Logger),
		log:     o.Logger,
		console: &console{w: o.Output},
		ready:   make(chan struct{}),
	}
	h.drain, h.stopDrain = context.WithCancel(context.Background())
	h.inv.unhealthy = h.unhealthyReason
	h.state.Store(StateStarting)
	if o.WorkerURL != "" {
		h.inv.setBase(o.WorkerURL)
		h.state.Store(StateRunning)
	}
	for _, e := range reg.failures {
		h.logLoadFailure(e)
	}
	if h.handler, err = h.routes(); err != nil {
		return nil, fmt.Errorf("setting up the legacy SSE transport: %w", err)
	}
	return h, nil
}

// logLoadFailure writes one log line naming the function, tool, file and reason.
func (h *Host) logLoadFailure(err error) {
	var te *binding.ToolError
	var fe *metadata.FunctionError
	switch {
	case errors.As(err, &te):
		h.log.Error("tool not served: "+oneLine(err.Error()),
			"function", te.Function, "tool", te.Tool, "file", te.File, "reason", oneLine(errString(te.Err)))
	case errors.As(err, &fe):
		h.log.Error("function not loaded: "+oneLine(err.Error()),
			"function", fe.Function, "file", fe.File, "reason", oneLine(errString(fe.Err)))
	default:
		h.log.Error("function not loaded: " + oneLine(err.Error()))
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// oneLine joins the lines of a (joined) error message with "; ".
func oneLine(s string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	return strings.Join(strings.Split(s, "\n"), "; ")
}

func (h *Host) routes() (http.Handler, error) {
	r := chi.NewRouter()
	opts := &mcp.Options{
		ServerInfo:      mcp.Implementation{Name: h.cfg.ServerName, Version: h.cfg.ServerVersion},
		Instructions:    h.cfg.Instructions,
		Logger:          h.log,
		Sealer:          h.secrets.sealer,
		SessionLifetime: h.opts.SessionLifetime,
		OriginAllowed:   func(*http.Request) bool { return true }, // checked by guard, before
	}
	endpoint := mcp.NewHandler(toolSet{h}, opts)
	var err error
	if h.legacy, err = h.newLegacy(opts, endpoint); err != nil {
		return nil, err
	}
	g := newGuard(&h.opts)
	r.Use(g.check)
	r.Handle(MCPPath, h.requireKey(requireJSON(endpoint)))
	r.Handle(SSEPath, h.requireKey(http.HandlerFunc(h.legacy.sse.ServeStream)))
	r.Handle(MessagePath, h.requireKey(requireJSON(http.HandlerFunc(h.legacy.sse.ServeMessage))))
	r.Method(http.MethodGet, StatusPath, h.requireKey(http.HandlerFunc(h.serveStatus)))
	return r, nil
}

// Handler returns the host's HTTP handler: the MCP endpoint at
// /runtime/webhooks/mcp and GET /admin/host/status.
func (h *Host) Handler() http.Handler { return h.handler }

// Status reports the host's state and what it serves.
func (h *Host) Status() *Status {
	st := &Status{
		State:       h.state.Load().(State),
		Reason:      h.unhealthyReason(),
		ToolsServed: len(h.reg.tools),
		ToolsFailed: len(h.reg.failures),
		Functions:   append([]FunctionStatus{}, h.reg.funcs...),
		Errors:      []string{},
	}
	for _, e := range h.reg.failures {
		st.Errors = append(st.Errors, oneLine(e.Error()))
	}
	h.mu.Lock()
	st.Errors = append(st.Errors, h.liveErrors...)
	h.mu.Unlock()
	return st
}

func (h *Host) serveStatus(w http.ResponseWriter, _ *http.Request) {
	// The status names files relative to the script root: the machine's
	// folders are nobody's business over HTTP.
	st := h.Status()
	for i := range st.Errors {
		st.Errors[i] = h.relative(st.Errors[i])
	}
	for i := range st.Functions {
		st.Functions[i].Error = h.relative(st.Functions[i].Error)
	}
	data, err := metadata.Marshal(st)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

// relative removes the script root from the paths in a message.
func (h *Host) relative(msg string) string {
	return strings.ReplaceAll(msg, h.root+string(filepath.Separator), "")
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

// printFunctions writes the function list and one line per load failure.
func (h *Host) printFunctions() {
	var sb strings.Builder
	sb.WriteString("Functions:\n\n")
	for _, f := range h.reg.funcs {
		switch {
		case f.Served:
			fmt.Fprintf(&sb, "  %s: %s (tool %s)\n", f.Name, f.Trigger, f.Tool)
		case f.Error != "":
			if f.Tool != "" {
				fmt.Fprintf(&sb, "  %s: %s (tool %s) (not served: see the error below)\n", f.Name, f.Trigger, f.Tool)
			} else {
				fmt.Fprintf(&sb, "  %s: (not loaded: see the error below)\n", f.Name)
			}
		default:
			trigger := f.Trigger
			if trigger == "" {
				trigger = "no trigger"
			}
			fmt.Fprintf(&sb, "  %s: %s (not served: only mcpToolTrigger functions are)\n", f.Name, trigger)
		}
	}
	if len(h.reg.funcs) == 0 {
		sb.WriteString("  (none)\n")
	}
	sb.WriteString("\n")
	for _, e := range h.reg.failures {
		fmt.Fprintf(&sb, "Error: %s\n", oneLine(e.Error()))
	}
	if len(h.reg.failures) > 0 {
		sb.WriteString("\n")
	}
	h.console.printf("%s", sb.String())
}

// maxLiveErrors bounds the problems kept for /admin/host/status: a worker
// that keeps crashing adds one each time, for as long as the host runs.
const maxLiveErrors = 50

// addLiveError records msg, forgetting the oldest beyond maxLiveErrors.
func (h *Host) addLiveError(msg string) {
	h.mu.Lock()
	if len(h.liveErrors) >= maxLiveErrors {
		n := copy(h.liveErrors, h.liveErrors[len(h.liveErrors)-maxLiveErrors+1:])
		h.liveErrors = h.liveErrors[:n]
	}
	h.liveErrors = append(h.liveErrors, msg)
	h.mu.Unlock()
}

// Run prints the function list, listens on opts.Addr, starts the worker (unless
// opts.WorkerURL is set), waits until it is ready, prints
//
//	MCP server endpoint: http://127.0.0.1:<port>/runtime/webhooks/mcp
//
// and serves until ctx is done. Then it stops the server and the worker and
// returns nil. A Host runs once.
func (h *Host) Run(ctx context.Context) error {
	if !h.running.CompareAndSwap(false, true) {
		return errors.New("running the host: it already ran")
	}
	defer h.state.Store(StateStopped)
	defer h.inv.close()
	defer h.notify.close()
	h.printFunctions()

	ln, err := net.Listen("tcp", h.opts.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", h.opts.Addr, err)
	}
	ln = newLimitListener(ln, h.opts.MaxConnections)
	if err := h.legacy.start(ctx); err != nil {
		_ = ln.Close()
		return err
	}
	defer func() {
		if err := h.legacy.stop(ctx); err != nil {
			h.log.Warn("stopping the backplane failed", "error", err)
		}
	}()
	srv := &http.Server{
		Handler:           h.deadlines(h.handler),
		ReadHeaderTimeout: h.opts.ReadHeaderTimeout,
		IdleTimeout:       h.opts.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(h.log.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(h.legacy.sse.Close) // SSE streams never end by themselves
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	// shutdown stops accepting, lets running calls finish within
	// DrainTimeout, then stops those left (each is answered with a JSON-RPC
	// error) and waits up to StopTimeout more for their replies.
	shutdown := func() {
		h.state.Store(StateStopping)
		done := make(chan error, 1)
		bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.opts.DrainTimeout+h.opts.StopTimeout)
		defer cancel()
		go func() { done <- srv.Shutdown(bctx) }()
		t := time.NewTimer(h.opts.DrainTimeout)
		defer t.Stop()
		select {
		case <-done:
			return
		case <-t.C:
		}
		h.log.Warn("stopping the tool calls still running after the drain timeout", "drainTimeout", h.opts.DrainTimeout)
		h.stopDrain()
		if err := <-done; err != nil {
			_ = srv.Close()
		}
	}

	var superviseCancel context.CancelFunc = func() {}
	var supervised chan supervisedWorker
	if h.opts.WorkerURL == "" {
		spec := &workerSpec{Root: h.root, Desc: h.cfg.Worker, Values: h.cfg.Values, Environ: h.opts.Environ, Console: h.console,
			OnExit: func(p *workerProcess) { h.inv.markDown(p.url) }}
		proc, err := startWorker(spec)
		if err != nil {
			shutdown()
			return fmt.Errorf("starting the worker: %w", err)
		}
		h.log.Info("worker process started", "pid", proc.pid(), "path", proc.cmd.Path, "port", proc.port)
		h.inv.setBase(proc.url)
		if err := proc.waitReady(ctx, h.opts.StartupTimeout); err != nil {
			_ = proc.stop(h.opts.StopTimeout)
			shutdown()
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("starting the worker: %w", err)
		}
		var sctx context.Context
		sctx, superviseCancel = context.WithCancel(ctx)
		supervised = make(chan supervisedWorker, 1)
		sup := &supervisor{h: h, spec: spec, now: time.Now, delay: h.restartDelay,
			probe: &prober{interval: h.opts.ProbeInterval, timeout: h.opts.ProbeTimeout, failures: h.opts.ProbeFailures}}
		go func() {
			p, err := sup.supervise(sctx, proc)
			supervised <- supervisedWorker{p, err}
		}()
	}

	addr := endpointAddr(ln.Addr())
	h.addr.Store(&addr)
	h.state.Store(StateRunning)
	h.console.printf("MCP server endpoint: %s\n", h.Endpoint())
	h.console.printf("MCP server legacy SSE endpoint: %s/sse\n", h.Endpoint())
	h.console.printf("Function keys: %s\n", h.secrets.where)
	h.log.Info("session tokens are sealed with " + h.secrets.sessionWhere)
	h.log.Info("legacy SSE backplane started", "backplane", h.legacy.kind, "instance", h.legacy.instanceID)
	close(h.ready)

	var last supervisedWorker
	select {
	case <-ctx.Done():
		err = nil
	case err = <-serveErr:
		err = fmt.Errorf("serving: %w", err)
	case last = <-supervised: // only when the supervisor itself failed
		supervised = nil
		err = last.err
	}
	superviseCancel()
	shutdown()
	if supervised != nil {
		last = <-supervised
	}
	if proc := last.proc; proc != nil {
		if serr := proc.stop(h.opts.StopTimeout); serr != nil {
			err = errors.Join(err, fmt.Errorf("stopping the worker: %w", serr))
		}
		h.log.Info("worker process stopped", "pid", proc.pid())
	}
	return err
}

// supervisedWorker is what the supervisor hands back: the worker still running
// (nil when none is) and why it stopped early, if it did.
type supervisedWorker struct {
	proc *workerProcess
	err  error
}

// endpointAddr is the host:port clients should use: loopback for a wildcard
// listen address.
func endpointAddr(a net.Addr) string {
	tcp, ok := a.(*net.TCPAddr)
	if !ok {
		return a.String()
	}
	ip := "127.0.0.1"
	if !tcp.IP.IsUnspecified() && tcp.IP != nil {
		ip = tcp.IP.String()
	}
	return net.JoinHostPort(ip, strconv.Itoa(tcp.Port))
}
