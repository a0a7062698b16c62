package host

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/host/internal/guard"
	"github.com/funcmcp/funcmcp/host/internal/launch"
	"github.com/funcmcp/funcmcp/host/internal/supervise"
	"github.com/funcmcp/funcmcp/host/internal/telemetry"
	"github.com/funcmcp/funcmcp/internal/startgc"
)

// Run prints the function list, listens on opts.Addr, waits until the
// worker New started (unless opts.WorkerURL is set) is ready, prints
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
	defer h.board.Set(StateStopped)
	defer h.Close()
	h.board.PrintFunctions()

	if h.opts.WorkerURL == "" {
		// Calls that come before the worker is ready wait for it.
		h.inv.ExpectWorker()
	}
	ln, err := h.listen()
	if err != nil {
		return err
	}
	limited := guard.LimitListener(ln, guard.ConnLimits{
		Global: h.opts.MaxConnections, PerAddress: h.opts.MaxConnectionsPerAddress,
		GlobalSetting: "MaxConnections (--max-connections)", PerAddressSetting: "MaxConnectionsPerAddress (--max-connections-per-address)",
		Refused: func() { h.tel.Refused(context.Background(), telemetry.RefusedConnections) },
	})
	ln, h.conns = limited, limited
	if err := h.legacy.Start(ctx); err != nil {
		_ = ln.Close()
		return err
	}
	defer func() {
		if err := h.legacy.Stop(ctx); err != nil {
			h.log.Warn("stopping the backplane failed", "error", err)
		}
	}()
	srv := &http.Server{
		Handler:           guard.Deadlines(h.handler, h.opts.ReadTimeout, h.writeWithin()),
		ReadHeaderTimeout: h.opts.ReadHeaderTimeout,
		MaxHeaderBytes:    MaxHeaderBytes,
		IdleTimeout:       h.opts.IdleTimeout,
		ConnState:         limited.ConnState, // which connections are idle, to close under pressure
		ErrorLog:          slog.NewLogLogger(h.log.Handler(), slog.LevelWarn),
	}
	srv.RegisterOnShutdown(h.legacy.SSE().Close) // SSE streams never end by themselves
	// Nor do listening streams: they end gracefully (a "complete" result).
	srv.RegisterOnShutdown(h.changes.EndListeners)
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	// shutdown stops accepting, lets running calls finish within
	// DrainTimeout, then stops those left (each is answered with a JSON-RPC
	// error) and waits up to StopTimeout more for their replies.
	shutdown := func() {
		h.board.Set(StateStopping)
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
	if h.early != nil {
		if !h.early.take() { // Close came first and stopped it
			shutdown()
			return errors.New("running the host: it is closed")
		}
		// The worker New started: what it said meanwhile comes out now,
		// after the function list, and its readiness is awaited.
		sup = h.early.sup
		h.early.gate.release()
		if err := h.early.wait(ctx); err != nil {
			h.board.Unhealthy(fmt.Sprintf("the worker did not start: %v", err)) // calls waiting for it fail now
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

	// The schemas load checked but left to compile are compiled a little
	// later, after the first calls, which do not need them (valid values
	// are vouched for by the check on JSON text; a call that needs one
	// compiles it itself): compiled at once, they took a core from the
	// first call of a client that calls as soon as the host is up.
	// They are the last of the start's work: the collector, held off
	// while the process started (internal/startgc), runs after them.
	compileLater := time.AfterFunc(cmp.Or(h.opts.compileDelay, deferredCompileDelay), func() {
		h.cat.CompileDeferred()
		startgc.Release()
	})
	defer compileLater.Stop()

	addr := endpointAddr(ln.Addr())
	h.addr.Store(&addr)
	h.board.Set(StateRunning)
	h.console.Printf("MCP server endpoint: %s\n", h.Endpoint())
	h.console.Printf("MCP server legacy SSE endpoint: %s/sse\n", h.Endpoint())
	h.console.Printf("%s\n", h.keysLine())
	h.console.Printf("Telemetry: %s\n", h.telSummary.Text)
	if h.oauth != nil {
		h.console.Printf("Access tokens: required (%s); protected resource metadata: %s\n",
			SettingAuthIssuer, "http://"+addr+MetadataPath+MCPPath)
		if h.cfg.AuthLevel != config.AuthAnonymous {
			h.log.Warn("MCP endpoints ask for both an access token and a function key; OAuth clients send no key: set webhookAuthorizationLevel to Anonymous to take tokens alone")
		}
	}
	h.log.Info("session tokens are sealed with " + h.secrets.SessionWhere)
	h.log.Info("legacy SSE backplane started", "backplane", h.legacy.Kind(), "instance", h.legacy.InstanceID())
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
	if ctx.Err() != nil {
		h.log.Info("stopping: no new connections; the calls in flight may finish", "drainTimeout", h.opts.DrainTimeout)
	}
	shutdown()
	// Task work is no connection, so the drain did not wait for it: it ends
	// now (failed, the host stopped), which ends its calls on the worker
	// before the worker is asked to stop, instead of holding its stop for
	// the stop timeout.
	h.stopTasks()
	if supervised != nil {
		<-supervised
	}
	if sup != nil {
		if serr := sup.Stop(); serr != nil {
			err = errors.Join(err, fmt.Errorf("stopping the worker: %w", serr))
		}
	}
	if err == nil {
		h.log.Info("stopped")
	}
	return err
}

// listen listens on Addr, but not on the port the worker New started was
// given: the supervisor lets that port go for the worker to take, and on an
// ephemeral Addr (port 0) the kernel may give it to the host first. The
// host's own server would then answer the worker's readiness probe, and its
// calls.
func (h *Host) listen() (net.Listener, error) {
	workerPort := func() int { return 0 }
	if h.early != nil {
		workerPort = h.early.sup.WorkerPort
	}
	ln, err := listenAvoiding(func() (net.Listener, error) { return net.Listen("tcp", h.opts.Addr) }, workerPort)
	if err != nil {
		return nil, fmt.Errorf("listening on %s: %w", h.opts.Addr, err)
	}
	return ln, nil
}

// listenAvoiding listens until the port it gets is not avoid's (a few
// times at most).
func listenAvoiding(listen func() (net.Listener, error), avoid func() int) (net.Listener, error) {
	for range 8 {
		ln, err := listen()
		if err != nil {
			return nil, err
		}
		if port := listenerPort(ln); port == 0 || port != avoid() {
			return ln, nil
		}
		_ = ln.Close()
	}
	return nil, errors.New("the kernel gave the worker's port eight times")
}

// listenerPort is ln's TCP port; 0 for another kind of listener.
func listenerPort(ln net.Listener) int {
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		return a.Port
	}
	return 0
}

// deferredCompileDelay is how long after the host is up the schemas that
// load left to compile are compiled (see Run).
const deferredCompileDelay = 100 * time.Millisecond

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

// keysLine is the start-up line that says whether requests need a function
// key, which one, and where the keys are kept (never the keys themselves).
func (h *Host) keysLine() string {
	switch h.cfg.AuthLevel {
	case config.AuthAnonymous:
		return "Function keys: not required (webhookAuthorizationLevel is Anonymous)"
	case config.AuthAdmin:
		return "Function keys: required, the master key in the x-functions-key header or ?code=; kept in " + h.secrets.Where
	}
	return "Function keys: required, the mcp_extension system key or the master key in the x-functions-key header or ?code=; kept in " + h.secrets.Where
}

// The worker process starts in New, as soon as host.json and
// local.settings.json are read, so that its start (the reaper's and the
// worker's own, their runtimes and package inits, the app's set-up and
// listening) runs beside the rest of the load: the functions read and
// their schemas checked, the endpoints set up, funchost's last steps
// before Run. Until Run has printed the function list and listens, what
// the worker start says is held back (a gate): its lines, the
// supervisor's log lines and its reports to the host come out then, in
// order, as they did when Run started the worker. A host that never runs
// (New failed after the start, or Close came first) stops the worker and
// drops what was held.

// gate holds functions until it opens, then runs them in order; once open
// it runs each at once. Holding the lock while running keeps the order
// across goroutines.
type gate struct {
	mu     sync.Mutex
	open   bool
	closed bool // dropped: nothing held or later runs
	held   []func()
}

// do runs f now when the gate is open, later when it opens, never when it
// was dropped.
func (g *gate) do(f func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	switch {
	case g.closed:
	case g.open:
		f()
	default:
		g.held = append(g.held, f)
	}
}

// release opens the gate: what it holds runs now, in order.
func (g *gate) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open || g.closed {
		return
	}
	g.open = true
	for _, f := range g.held {
		f()
	}
	g.held = nil
}

// drop forgets what the gate holds and everything after, unless it is
// open already.
func (g *gate) drop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.open {
		g.closed = true
		g.held = nil
	}
}

// gatedWriter writes through a gate; each Write is one whole line (the
// supervisor writes the worker's output so).
type gatedWriter struct {
	g *gate
	w io.Writer
}

func (w gatedWriter) Write(p []byte) (int, error) {
	line := append([]byte(nil), p...)
	w.g.do(func() { _, _ = w.w.Write(line) })
	return len(p), nil
}

// gatedHandler logs through a gate.
type gatedHandler struct {
	g *gate
	h slog.Handler
}

func (h gatedHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.h.Enabled(ctx, l) }

func (h gatedHandler) Handle(ctx context.Context, r slog.Record) error {
	r = r.Clone()
	h.g.do(func() { _ = h.h.Handle(ctx, r) })
	return nil
}

func (h gatedHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return gatedHandler{h.g, h.h.WithAttrs(as)}
}

func (h gatedHandler) WithGroup(name string) slog.Handler {
	return gatedHandler{h.g, h.h.WithGroup(name)}
}

// gatedEvents passes the supervisor's reports on to the host through the
// gate: they need the invoke client and the status board, which New makes
// after the start, and Run's ExpectWorker before them.
type gatedEvents struct {
	g *gate
	h *Host
}

var (
	_ supervise.Reporter        = gatedEvents{}
	_ supervise.RestartReporter = gatedEvents{}
)

func (e gatedEvents) events() launch.Events {
	return launch.Events{Invoke: e.h.inv, Board: e.h.board, Telemetry: e.h.tel}
}

func (e gatedEvents) WorkerURL(url string)    { e.g.do(func() { e.events().WorkerURL(url) }) }
func (e gatedEvents) WorkerExited(url string) { e.g.do(func() { e.events().WorkerExited(url) }) }
func (e gatedEvents) Unhealthy(reason string) { e.g.do(func() { e.events().Unhealthy(reason) }) }
func (e gatedEvents) Healthy()                { e.g.do(func() { e.events().Healthy() }) }
func (e gatedEvents) Problem(msg string)      { e.g.do(func() { e.events().Problem(msg) }) }
func (e gatedEvents) Restarted(reason string) { e.g.do(func() { e.events().Restarted(reason) }) }

// earlyWorker is the worker process New started: its supervisor, and the
// outcome of its first start (Supervisor.Start), which Run waits for.
type earlyWorker struct {
	gate    *gate
	sup     *supervise.Supervisor
	cancel  context.CancelFunc // ends the wait for the worker to be ready
	started chan error         // Start's error, once
	err     error              // read from started, once
	waited  bool

	mu    sync.Mutex
	taken bool // Run took the supervisor; it stops the worker
}

// startWorker starts the worker process under a supervisor whose reports
// go through g, as h.worker's output and log do (New made it so), and
// returns at once.
func (h *Host) startWorker(g *gate) *earlyWorker {
	e := &earlyWorker{gate: g, started: make(chan error, 1)}
	e.sup = h.worker.Supervisor(h.opts.restartDelay, gatedEvents{g, h})
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel = cancel
	go func() { e.started <- e.sup.Start(ctx) }()
	return e
}

// wait returns the outcome of the first start, waiting for it; ctx ending
// first ends the wait for the worker to be ready (the start then fails).
func (e *earlyWorker) wait(ctx context.Context) error {
	if e.waited {
		return e.err
	}
	select {
	case e.err = <-e.started:
	case <-ctx.Done():
		e.cancel()
		e.err = <-e.started
	}
	e.waited = true
	e.cancel()
	return e.err
}

// take hands the supervisor to Run, which stops the worker from now on;
// false when the host was closed first.
func (e *earlyWorker) take() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.taken {
		return false
	}
	e.taken = true
	return true
}

// abandon stops a worker that no Run took: the host failed to load or was
// closed before it ran. What it held back is dropped.
func (e *earlyWorker) abandon() {
	if !e.take() {
		return
	}
	e.gate.drop()
	e.cancel()
	if e.wait(context.Background()) == nil {
		_ = e.sup.Stop()
	}
}
