package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/catalog"
	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/host/internal/guard"
	"github.com/funcmcp/funcmcp/host/internal/invoke"
	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/host/internal/supervise"
	"github.com/funcmcp/funcmcp/metadata"
)

// Version is the host version sent to the worker in the
// X-Azure-Functions-HostVersion and User-Agent headers.
const Version = "4.0.0-funcmcp"

// MCPPath is where the MCP endpoint is served.
const MCPPath = "/runtime/webhooks/mcp"

// StatusPath is where the host status is served.
const StatusPath = "/admin/host/status"

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

// FunctionStatus is one function of the app as GET /admin/host/status reports it.
type FunctionStatus = catalog.FunctionStatus

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
	opts Options
	root string
	cfg  *config.Config
	cat  *catalog.Catalog
	// params are the x-mcp-header arguments of each tool, by exact name.
	params  map[string][]mcp.ParamHeader
	inv     *invoke.Client
	notify  *invoke.Hub
	log     *slog.Logger
	console *console
	handler http.Handler
	secrets *auth.Secrets
	health  health
	legacy  *legacy
	// restartDelay overrides the supervisor's first back-off step (tests).
	restartDelay time.Duration
	calls        *guard.Calls

	state   atomic.Value // State
	running atomic.Bool
	closed  atomic.Bool
	// closeOnce makes Close idempotent.
	closeOnce sync.Once
	ready     chan struct{}
	addr      atomic.Pointer[string]

	mu         sync.Mutex
	liveErrors []string // the latest problems met while running (worker exits)
}

// New loads the app under opts.ScriptRoot: host.json, local.settings.json
// and every function. A tool that fails to load is logged and not served;
// the others still are. New fails only when the app as a whole cannot be
// served (no host.json, a bad configuration, an unreadable script root).
func New(opts *Options) (*Host, error) {
	o := withDefaults(opts)
	root, err := filepath.Abs(o.ScriptRoot)
	if err != nil {
		return nil, fmt.Errorf("resolving the script root: %w", err)
	}
	cfg, err := config.Load(root)
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
	sec, err := auth.Resolve(&auth.Given{MasterKey: o.MasterKey, SystemKey: o.SystemKey, SessionKey: o.SessionKey}, root, cfg)
	if err != nil {
		return nil, fmt.Errorf("loading the host keys: %w", err)
	}
	cat, err := catalog.Load(root, &catalog.Limits{
		FileBytes: int64(o.MaxFunctionFileBytes), SchemaBytes: o.MaxSchemaBytes, SchemaDepth: o.MaxSchemaDepth, CompileTime: o.SchemaCompileTime,
		ArgumentBytes: o.MaxArgumentBytes, ArgumentDepth: o.MaxArgumentDepth, ArgumentKeys: o.MaxArgumentKeys,
	})
	if err != nil {
		return nil, fmt.Errorf("loading functions: %w", err)
	}
	h := &Host{
		secrets: sec,
		calls:   guard.NewCalls(o.MaxCallsInFlight),
		opts:    o,
		root:    root,
		cfg:     cfg,
		cat:     cat,
		params:  paramHeaders(cat),
		notify:  invoke.NewHub(o.Logger, MaxNotificationsPerCall),
		log:     o.Logger,
		console: &console{w: o.Output},
		ready:   make(chan struct{}),
	}
	h.inv = invoke.NewClient(&invoke.Options{HostVersion: Version, Timeout: o.CallTimeout, RestartWait: o.RestartWait,
		MaxCalls: o.MaxCallsInFlight, Unhealthy: h.unhealthyReason})
	h.state.Store(StateStarting)
	if o.WorkerURL != "" {
		h.inv.SetWorker(o.WorkerURL)
		h.state.Store(StateRunning)
	}
	for _, e := range cat.Failures() {
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
		Sealer:          h.secrets.Sealer,
		SessionLifetime: h.opts.SessionLifetime,
	}
	endpoint := mcp.NewHandler(toolSet{h}, opts)
	var err error
	if h.legacy, err = h.newLegacy(opts, endpoint); err != nil {
		return nil, err
	}
	// Every endpoint is behind the one Host and Origin check.
	r.Use(guard.New(h.opts.AllowedHosts, h.opts.AllowedOrigins).Check)
	r.Handle(MCPPath, h.secrets.RequireKey(guard.RequireJSON(endpoint)))
	r.Handle(SSEPath, h.secrets.RequireKey(http.HandlerFunc(h.legacy.sse.ServeStream)))
	r.Handle(MessagePath, h.secrets.RequireKey(guard.RequireJSON(http.HandlerFunc(h.legacy.sse.ServeMessage))))
	r.Method(http.MethodGet, StatusPath, h.secrets.RequireKey(http.HandlerFunc(h.serveStatus)))
	return r, nil
}

// Handler returns the host's HTTP handler: the MCP endpoint at
// /runtime/webhooks/mcp, the legacy SSE endpoints and GET
// /admin/host/status. A Host used only through Handler is closed with
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
		h.notify.Close()
		h.inv.Close()
		h.legacy.sse.Close()
	})
	return nil
}

// Status reports the host's state and what it serves.
func (h *Host) Status() *Status {
	st := &Status{
		State:       h.state.Load().(State),
		Reason:      h.unhealthyReason(),
		ToolsServed: len(h.cat.Tools()),
		ToolsFailed: len(h.cat.Failures()),
		Functions:   h.cat.Functions(),
		Errors:      []string{},
	}
	for _, e := range h.cat.Failures() {
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
	funcs := h.cat.Functions()
	for _, f := range funcs {
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
	if len(funcs) == 0 {
		sb.WriteString("  (none)\n")
	}
	sb.WriteString("\n")
	for _, e := range h.cat.Failures() {
		fmt.Fprintf(&sb, "Error: %s\n", oneLine(e.Error()))
	}
	if len(h.cat.Failures()) > 0 {
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
	if h.closed.Load() {
		return errors.New("running the host: it is closed")
	}
	defer h.state.Store(StateStopped)
	defer h.Close()
	h.printFunctions()

	ln, err := net.Listen("tcp", h.opts.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", h.opts.Addr, err)
	}
	ln = guard.LimitListener(ln, h.opts.MaxConnections)
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
		Handler:           guard.Deadlines(h.handler, h.opts.ReadTimeout, h.writeWithin()),
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
		h.calls.StopWaiting()
		if err := <-done; err != nil {
			_ = srv.Close()
		}
	}

	var sup *supervise.Supervisor
	var superviseCancel context.CancelFunc = func() {}
	var supervised chan error
	if h.opts.WorkerURL == "" {
		sup = h.newSupervisor()
		if err := sup.Start(ctx); err != nil {
			shutdown()
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("starting the worker: %w", err)
		}
		var sctx context.Context
		sctx, superviseCancel = context.WithCancel(ctx)
		supervised = make(chan error, 1)
		go func() { supervised <- sup.Run(sctx) }()
	}

	addr := endpointAddr(ln.Addr())
	h.addr.Store(&addr)
	h.state.Store(StateRunning)
	h.console.printf("MCP server endpoint: %s\n", h.Endpoint())
	h.console.printf("MCP server legacy SSE endpoint: %s/sse\n", h.Endpoint())
	h.console.printf("Function keys: %s\n", h.secrets.Where)
	h.log.Info("session tokens are sealed with " + h.secrets.SessionWhere)
	h.log.Info("legacy SSE backplane started", "backplane", h.legacy.kind, "instance", h.legacy.instanceID)
	close(h.ready)

	select {
	case <-ctx.Done():
		err = nil
	case err = <-serveErr:
		err = fmt.Errorf("serving: %w", err)
	case err = <-supervised: // only when the supervisor itself failed
		supervised = nil
	}
	superviseCancel()
	shutdown()
	if supervised != nil {
		<-supervised
	}
	if sup != nil {
		if serr := sup.Stop(); serr != nil {
			err = errors.Join(err, fmt.Errorf("stopping the worker: %w", serr))
		}
	}
	return err
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

// writeWithin bounds writing a response: the call timeout plus a minute,
// which leaves a call's SSE stream all the time the call may take; 0 (no
// bound) when calls are unbounded.
func (h *Host) writeWithin() time.Duration {
	if h.opts.CallTimeout > 0 {
		return h.opts.CallTimeout + time.Minute
	}
	return 0
}
