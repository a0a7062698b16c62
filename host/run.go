package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/host/internal/guard"
	"github.com/funcmcp/funcmcp/host/internal/launch"
	"github.com/funcmcp/funcmcp/host/internal/supervise"
	"github.com/funcmcp/funcmcp/host/internal/telemetry"
)

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
	defer h.board.Set(StateStopped)
	defer h.Close()
	h.board.PrintFunctions()

	if h.opts.WorkerURL == "" {
		// Calls that come before the worker is ready wait for it.
		h.inv.ExpectWorker()
	}
	ln, err := net.Listen("tcp", h.opts.Addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", h.opts.Addr, err)
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
	if h.opts.WorkerURL == "" {
		sup = h.worker.Supervisor(h.restartDelay, launch.Events{Invoke: h.inv, Board: h.board, Telemetry: h.tel})
		if err := sup.Start(ctx); err != nil {
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

	// The schemas load checked but left to compile are compiled now, beside
	// the first calls, which do not need them (valid values are vouched for
	// by the check on JSON text; a call that needs one compiles it itself).
	go h.cat.CompileDeferred()

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
