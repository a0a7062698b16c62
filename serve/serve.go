package serve

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/funcmcp/funcmcp/host"
	"github.com/funcmcp/funcmcp/internal/cli"
	"github.com/funcmcp/funcmcp/metadata"
	"github.com/funcmcp/funcmcp/worker"
)

// Command is the argument that selects the one-process mode.
const Command = "serve"

// DefaultPort is the port serve listens on without --port, funchost's.
const DefaultPort = 7071

// Main runs the app as a command and exits: "serve" serves MCP in this
// process (see [RunArgs]); any other command line is the app's own
// ([worker.App.Main]). SIGINT and SIGTERM stop the server gracefully:
// running calls get the drain timeout to finish.
func Main(app *worker.App) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := RunArgs(ctx, app, os.Args, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage:
  %[1]s serve [flags]         serve MCP at http://HOST:PORT/runtime/webhooks/mcp in this process
  %[1]s                       serve on 127.0.0.1:$FUNCTIONS_CUSTOMHANDLER_PORT (run by a Functions host)
  %[1]s emit-metadata DIR     write DIR/<function>/function.json for every tool

flags of serve:
`

// RunArgs is [Main] without the exit. args is the whole command line,
// program name first. With "serve" it serves until ctx is done and returns
// 0, or 1 when the app cannot be served (its configuration, host.json,
// local.settings.json, the listen address), or 2 for bad flags; "help"
// prints the usage of both modes; anything else is [worker.App.RunArgs].
func RunArgs(ctx context.Context, app *worker.App, args []string, stdout, stderr io.Writer) int {
	prog := "app"
	if len(args) > 0 && args[0] != "" {
		prog = filepath.Base(args[0])
	}
	fs := newFlags(stderr)
	printUsage := func(w io.Writer) {
		fmt.Fprintf(w, usage, prog)
		fs.fs.SetOutput(w)
		fs.fs.PrintDefaults()
		fs.fs.SetOutput(stderr)
	}
	fs.fs.Usage = func() { printUsage(stderr) }
	if len(args) < 2 || args[1] != Command {
		if len(args) == 2 && (args[1] == "help" || args[1] == "-h" || args[1] == "--help") {
			printUsage(stdout)
			return 0
		}
		return app.RunArgs(ctx, args, stdout, stderr)
	}
	if err := fs.fs.Parse(args[2:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.fs.NArg() > 0 {
		fmt.Fprintf(stderr, "serve: unexpected arguments: %v\n", fs.fs.Args())
		return 2
	}
	logOut := cli.NewLogBuffer(stderr)
	defer logOut.Flush()
	opts, err := fs.options(stdout, logOut)
	if err != nil {
		fmt.Fprintf(stderr, "serve: %v\n", err)
		return 2
	}
	h, stop, err := newHost(ctx, app, opts, true)
	if err != nil {
		opts.Logger.Error("serve: " + err.Error())
		return 1
	}
	defer stop()
	defer h.Close()
	if err := h.Run(ctx); err != nil {
		opts.Logger.Error("serve: " + err.Error())
		return 1
	}
	return 0
}

// flags are serve's command-line flags.
type flags struct {
	fs                *flag.FlagSet
	port              *int
	addr              *string
	hosts, origins    *string
	verbose           *bool
	logFormat         *string
	maxCalls, maxArgs *int
	drain             *time.Duration
}

func newFlags(stderr io.Writer) *flags {
	fs := flag.NewFlagSet(Command, flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &flags{fs: fs,
		port:      fs.Int("port", DefaultPort, "the port to listen on (0 picks a free port)"),
		addr:      fs.String("host", "127.0.0.1", "the address to listen on (0.0.0.0: every interface, as in a container)"),
		hosts:     fs.String("allowed-hosts", "", "comma-separated host names clients may use besides 127.0.0.1, localhost and [::1]"),
		origins:   fs.String("allowed-origins", "", "comma-separated browser origins (scheme://host[:port]) allowed besides those on allowed hosts"),
		verbose:   fs.Bool("verbose", false, "log at debug level, with one line per MCP request"),
		logFormat: fs.String("log-format", "text", "the log's format on stderr: text or json"),
		maxCalls:  fs.Int("max-calls-in-flight", host.DefaultMaxCallsInFlight, "tool calls running at once; more get a JSON-RPC busy error"),
		maxArgs:   fs.Int("max-argument-bytes", host.DefaultMaxArgumentBytes, "total JSON size of a call's arguments"),
		drain:     fs.Duration("drain-timeout", host.DefaultDrainTimeout, "how long running calls may finish after SIGTERM"),
	}
	return f
}

// options are the host options the flags ask for.
func (f *flags) options(stdout, stderr io.Writer) (*host.Options, error) {
	if *f.port < 0 || *f.port > 65535 {
		return nil, fmt.Errorf("--port %d is not a port number", *f.port)
	}
	if *f.drain < 0 {
		return nil, fmt.Errorf("--drain-timeout %v is negative", *f.drain)
	}
	logger, err := cli.Logger(stderr, *f.logFormat, *f.verbose)
	if err != nil {
		return nil, err
	}
	return &host.Options{
		Addr:             net.JoinHostPort(*f.addr, strconv.Itoa(*f.port)),
		Logger:           logger,
		Output:           stdout,
		AllowedHosts:     cli.SplitList(*f.hosts),
		AllowedOrigins:   cli.SplitList(*f.origins),
		MaxCallsInFlight: *f.maxCalls,
		MaxArgumentBytes: *f.maxArgs,
		DrainTimeout:     *f.drain,
	}, nil
}

// New makes the host that serves app in this process: opts as for
// host.New (nil: defaults; ScriptRoot is where host.json and
// local.settings.json are read, "" the working folder), the catalog from
// the app's own metadata, every call served by the app's handler. The
// local.settings.json Values an environment variable does not already set
// become the process environment, where the app's code reads its
// settings, with where the app announces changes; the function keys
// (host.EnvMasterKey, host.EnvSystemKey) leave it once the host has read
// them. The app's Telemetry is not started (the serve command starts it).
// Run the host with [host.Host.Run], or serve [host.Host.Handler]; close
// it when done.
func New(app *worker.App, opts *host.Options) (*host.Host, error) {
	h, _, err := newHost(context.Background(), app, opts, false)
	return h, err
}

// newHost is New; with telemetry it also starts the app's Telemetry when
// the host's is on (as funchost lets its worker export only then), and
// returns the func that stops it.
func newHost(ctx context.Context, app *worker.App, opts *host.Options, telemetry bool) (*host.Host, func(), error) {
	var o host.Options
	if opts != nil {
		o = *opts
	}
	// One build gives the catalog and, below, the handler.
	prepared, err := app.Prepare()
	if err != nil {
		return nil, nil, fmt.Errorf("building the app: %w", err)
	}
	fns, err := readBack(prepared.Functions(), o.ScriptRoot)
	if err != nil {
		return nil, nil, err
	}
	// The app's handler is made once its environment is set and its
	// telemetry started (which wraps it); no call comes before New returns.
	handler := &lateHandler{}
	o.Functions, o.Schemas, o.WorkerHandler = fns, prepared.Schemas(), handler
	h, err := host.New(&o)
	if err != nil {
		return nil, nil, err
	}
	stop := func() {}
	fail := func(err error) (*host.Host, func(), error) {
		stop()
		_ = h.Close()
		return nil, nil, err
	}
	values, own := h.InProcessSettings()
	if err := setEnviron(values, own); err != nil {
		return fail(err)
	}
	// The host has read its keys; the app's code, in the same process,
	// does not see them in the environment, as funchost's worker does not.
	for _, k := range []string{host.EnvMasterKey, host.EnvSystemKey} {
		if err := os.Unsetenv(k); err != nil {
			return fail(fmt.Errorf("hiding %s from the app: %w", k, err))
		}
	}
	if telemetry {
		if stop, err = app.StartTelemetry(ctx); err != nil {
			stop = func() {}
			return fail(err)
		}
	}
	wh := prepared.Handler()
	if err := ready(wh); err != nil {
		return fail(err)
	}
	handler.h.Store(wh)
	return h, stop, nil
}

// ready asks the app's handler what a host's readiness probe asks (GET
// /): a handler whose configuration is broken (a view file that is not
// there, bad output settings in host.json) answers every request 500 with
// the problems, which serving it would hide behind every call's failure.
func ready(h http.Handler) error {
	w := &probeWriter{header: http.Header{}}
	h.ServeHTTP(w, probeRequest())
	if w.status != 0 && w.status != http.StatusOK {
		return fmt.Errorf("the app cannot serve: %s", strings.TrimSpace(w.body.String()))
	}
	return nil
}

// probeRequest is the probe's request.
func probeRequest() *http.Request {
	r, _ := http.NewRequest(http.MethodGet, "http://worker/", nil)
	return r
}

// probeWriter keeps the probe's answer.
type probeWriter struct {
	header http.Header
	status int
	body   strings.Builder
}

func (w *probeWriter) Header() http.Header { return w.header }

func (w *probeWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *probeWriter) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	if w.body.Len() < 4096 {
		w.body.Write(p[:min(len(p), 4096-w.body.Len())])
	}
	return len(p), nil
}

// lateHandler is the app's handler, set once made.
type lateHandler struct{ h atomic.Value }

func (l *lateHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.h.Load().(http.Handler).ServeHTTP(w, r)
}

// LocalTools returns the tool caller of the app's handler
// ([metadata.LocalTools]): the host hands it tool calls with no encoding.
func (l *lateHandler) LocalTools() metadata.LocalToolCaller {
	h, _ := l.h.Load().(http.Handler)
	return metadata.LocalTools(h)
}

// Functions returns the app's functions as the host reads them from the
// folders emit-metadata writes: each function.json text, encoded and read
// back, named as the file under root would be.
func Functions(app *worker.App, root string) ([]*metadata.Function, error) {
	fns, err := app.Functions()
	if err != nil {
		return nil, fmt.Errorf("building the app: %w", err)
	}
	return readBack(fns, root)
}

// readBack is Functions for the functions of an app built already.
func readBack(fns []*metadata.Function, root string) ([]*metadata.Function, error) {
	out := make([]*metadata.Function, 0, len(fns))
	for _, fn := range fns {
		// The file's text without its indentation: the same JSON, read the
		// same way.
		data, err := fn.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("encoding function %s: %w", fn.Name, err)
		}
		read, err := metadata.ParseFunction(fn.Name, filepath.Join(root, fn.Name, metadata.FunctionFile), data)
		if err != nil {
			return nil, err
		}
		out = append(out, read)
	}
	return out, nil
}

// setEnviron sets each "KEY=VALUE" of values and own in the process
// environment, but a value whose variable the environment already sets
// (non-empty): settings given as environment (a container's) win over
// local.settings.json. own are the host's and always set.
func setEnviron(values, own []string) error {
	for _, kv := range values {
		k, v, _ := strings.Cut(kv, "=")
		if cur, ok := os.LookupEnv(k); ok && cur != "" {
			continue
		}
		if err := os.Setenv(k, v); err != nil {
			return fmt.Errorf("setting %s: %w", k, err)
		}
	}
	for _, kv := range own {
		k, v, _ := strings.Cut(kv, "=")
		if err := os.Setenv(k, v); err != nil {
			return fmt.Errorf("setting %s: %w", k, err)
		}
	}
	return nil
}
