package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/funcmcp/funcmcp/host"
	"github.com/funcmcp/funcmcp/internal/cli"
)

const usage = `funchost runs a custom-handler function app and serves its mcpToolTrigger
functions as MCP tools at /runtime/webhooks/mcp.

Usage:
  funchost start [flags]
  funchost new [--module PATH] [--funcmcp DIR] [--force] DIR
  funchost --version
  funchost --help

new writes a ready app into DIR (see funchost new --help); then
make -C DIR run builds and serves it.

Flags of start:
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("funchost start", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("script-root", ".", "the function app folder (host.json and one folder per function)")
	port := fs.Int("port", 7071, "the port to listen on, on 127.0.0.1 (0 picks a free port)")
	startup := fs.Duration("startup-timeout", host.DefaultStartupTimeout, "how long the worker may take to answer GET /")
	call := fs.Duration("call-timeout", 0, "how long one tool invocation may take (0: host.json functionTimeout, else 30m)")
	verbose := fs.Bool("verbose", false, "log at debug level, with one line per MCP request (method, revision, name, duration, outcome)")
	logFormat := fs.String("log-format", "text", "the log's format on stderr: text or json")
	maxCalls := fs.Int("max-calls-in-flight", host.DefaultMaxCallsInFlight, "tool calls running at once; more get a JSON-RPC busy error")
	maxTasks := fs.Int("max-running-tasks", 0, "task work running at once, below --max-calls-in-flight (0: three quarters of it)")
	maxClientTasks := fs.Int("max-running-tasks-per-client", host.DefaultMaxRunningTasksPerClient, "task work one client runs at once")
	maxConns := fs.Int("max-connections", host.DefaultMaxConnections, "open client connections; over it an idle one is closed, else the new one is answered 503")
	maxAddrConns := fs.Int("max-connections-per-address", host.DefaultMaxConnectionsPerAddress, "open connections of one client address; more are answered 503 once none of its connections is idle")
	maxArgs := fs.Int("max-argument-bytes", host.DefaultMaxArgumentBytes, "total JSON size of a call's arguments")
	drain := fs.Duration("drain-timeout", host.DefaultDrainTimeout, "how long running calls may finish after SIGTERM")
	probe := fs.Duration("probe-interval", host.DefaultProbeInterval, "how often the worker's liveness is probed (negative: never)")
	hosts := fs.String("allowed-hosts", "", "comma-separated host names clients may use besides 127.0.0.1, localhost and [::1]")
	origins := fs.String("allowed-origins", "", "comma-separated browser origins (scheme://host[:port]) allowed besides those on allowed hosts")
	printUsage := func(w io.Writer) {
		fmt.Fprint(w, usage)
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(stderr)
	}
	fs.Usage = func() { printUsage(stderr) }

	if len(args) == 0 {
		printUsage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		printUsage(stdout)
		return 0
	case "-version", "--version", "version":
		fmt.Fprintln(stdout, versionLine())
		return 0
	case "start":
	case "new":
		return runNew(ctx, args[1:], stdout, stderr)
	default:
		fmt.Fprintf(stderr, "funchost: unknown command %q\n\n", args[0])
		printUsage(stderr)
		return 2
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "funchost: unexpected arguments: %v\n", fs.Args())
		return 2
	}
	if *port < 0 || *port > 65535 {
		fmt.Fprintf(stderr, "funchost: --port %d is not a port number\n", *port)
		return 2
	}
	logOut := cli.NewLogBuffer(stderr)
	defer logOut.Flush()
	logger, err := cli.Logger(logOut, *logFormat, *verbose)
	if err != nil {
		fmt.Fprintf(stderr, "funchost: %v\n", err)
		return 2
	}
	// Loading reads the app's files; should one of them ever stall it, a
	// signal still ends the command.
	type loaded struct {
		h   *host.Host
		err error
	}
	workerProcs, ownProcs := shareCPUs(os.Getenv, runtime.GOMAXPROCS(0))
	ready := make(chan loaded, 1)
	go func() {
		h, err := host.New(&host.Options{
			ScriptRoot:               *root,
			Addr:                     net.JoinHostPort("127.0.0.1", strconv.Itoa(*port)),
			Logger:                   logger,
			Output:                   stdout,
			StartupTimeout:           *startup,
			CallTimeout:              *call,
			AllowedHosts:             cli.SplitList(*hosts),
			MaxCallsInFlight:         *maxCalls,
			MaxRunningTasks:          *maxTasks,
			MaxRunningTasksPerClient: *maxClientTasks,
			MaxConnections:           *maxConns,
			MaxConnectionsPerAddress: *maxAddrConns,
			MaxArgumentBytes:         *maxArgs,
			DrainTimeout:             *drain,
			ProbeInterval:            *probe,
			AllowedOrigins:           cli.SplitList(*origins),
			StopTimeout:              5 * time.Second,
			WorkerProcs:              workerProcs,
		})
		ready <- loaded{h, err}
	}()
	var h *host.Host
	select {
	case l := <-ready:
		if l.err != nil {
			logger.Error("funchost: " + l.err.Error())
			return 1
		}
		h = l.h
		if ownProcs > 0 {
			runtime.GOMAXPROCS(ownProcs)
			logger.Debug("funchost and the worker share the CPUs", "GOMAXPROCS", ownProcs)
		}
	case <-ctx.Done():
		logger.Error("funchost: stopped while loading the app")
		return 1
	}
	defer h.Close()
	if err := h.Run(ctx); err != nil {
		msg := "funchost: " + err.Error()
		if portInUse(err) {
			msg += fmt.Sprintf(": port %d is in use by another program (another funchost or func start?): "+
				"serve on another port with --port N (make run PORT=N), or --port 0 for a free one", *port)
		}
		logger.Error(msg)
		return 1
	}
	return 0
}

// portInUse reports whether err is a listen that found its port taken.
// Windows says it in words of its own (WSAEADDRINUSE).
func portInUse(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "Only one usage of each socket address")
}
