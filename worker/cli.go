package worker

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/funcmcp/funcmcp/metadata"
)

// Main runs the app as a command and exits: see [App.RunArgs], which it
// calls with os.Args. SIGINT and SIGTERM stop the server gracefully.
func (a *App) Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := a.RunArgs(ctx, os.Args, a.stdout, a.stderr)
	stop()
	os.Exit(code)
}

const usage = `usage:
  %[1]s                       serve on 127.0.0.1:$FUNCTIONS_CUSTOMHANDLER_PORT (run by the Functions host)
  %[1]s emit-metadata DIR     write DIR/<function>/function.json for every tool
`

// RunArgs is [App.Main] without the exit. args is the whole command line,
// program name first, as in os.Args; the program name is used in the usage
// text only. It returns the exit code:
//
//   - "emit-metadata DIR": writes every function.json (0), or writes nothing
//     and prints every configuration problem to stderr (1);
//   - no arguments: serves on 127.0.0.1:$FUNCTIONS_CUSTOMHANDLER_PORT
//     (falling back to $FUNCTIONS_HTTPWORKER_PORT) until ctx is done (0);
//     a missing port, a configuration problem or a listen error prints the
//     reason and returns 1;
//   - "help", "-h", "--help": usage on stdout (0); anything else: usage on
//     stderr (2).
func (a *App) RunArgs(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	prog := "app"
	if len(args) > 0 {
		if args[0] != "" {
			prog = baseName(args[0])
		}
		args = args[1:]
	}
	switch {
	case len(args) == 0:
		return a.serveFromEnv(ctx, stdout, stderr)
	case args[0] == "emit-metadata":
		if len(args) != 2 || args[1] == "" {
			fmt.Fprintf(stderr, "emit-metadata needs exactly one directory\n"+usage, prog)
			return 2
		}
		return a.emit(args[1], stdout, stderr)
	case args[0] == "help" || args[0] == "-h" || args[0] == "--help":
		fmt.Fprintf(stdout, usage, prog)
		return 0
	default:
		fmt.Fprintf(stderr, "unknown command %q\n"+usage, args[0], prog)
		return 2
	}
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

func printProblems(w io.Writer, what string, err error) {
	ps := problems(err)
	fmt.Fprintf(w, "%s: %d problem(s):\n", what, len(ps))
	for _, p := range ps {
		fmt.Fprintf(w, "  %v\n", p)
	}
}

func (a *App) emit(dir string, stdout, stderr io.Writer) int {
	fns, err := a.Functions()
	if err != nil {
		printProblems(stderr, "emit-metadata: the configuration is invalid, nothing was written", err)
		return 1
	}
	files, err := metadata.WriteFunctions(dir, fns)
	if err != nil {
		fmt.Fprintf(stderr, "emit-metadata: %v\n", err)
		return 1
	}
	for _, f := range files {
		fmt.Fprintf(stdout, "wrote %s\n", f)
	}
	for _, f := range staleFunctions(dir, fns) {
		fmt.Fprintf(stderr, "emit-metadata: warning: %s is not a function of this app, but a host will still load it; delete its folder if the tool was renamed or removed\n", f)
	}
	return 0
}

// staleFunctions lists the function.json files under dir whose folder is not
// one of fns: left over from tools that were renamed or removed.
func staleFunctions(dir string, fns []*metadata.Function) []string {
	ours := make(map[string]bool, len(fns))
	for _, f := range fns {
		ours[strings.ToLower(f.Name)] = true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var stale []string
	for _, e := range entries {
		file := filepath.Join(dir, e.Name(), metadata.FunctionFile)
		if !e.IsDir() || ours[strings.ToLower(e.Name())] {
			continue
		}
		if _, err := os.Stat(file); err == nil {
			stale = append(stale, file)
		}
	}
	return stale
}

func (a *App) serveFromEnv(ctx context.Context, stdout, stderr io.Writer) int {
	port := os.Getenv(metadata.EnvCustomHandlerPort)
	if port == "" {
		port = os.Getenv(metadata.EnvHTTPWorkerPort)
	}
	if port == "" {
		fmt.Fprintf(stderr, "serve: neither %s nor %s is set: run this program under a Functions host, or use emit-metadata DIR\n",
			metadata.EnvCustomHandlerPort, metadata.EnvHTTPWorkerPort)
		return 1
	}
	c, err := a.prepare()
	if err != nil {
		printProblems(stderr, "serve: the configuration is invalid", err)
		return 1
	}
	shutdown, err := a.startTelemetry(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "serve: %v\n", err)
		return 1
	}
	defer shutdown()
	addr := net.JoinHostPort("127.0.0.1", port)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "serve: listening on %s: %v\n", addr, err)
		return 1
	}
	fmt.Fprintf(stdout, "serving %d tool(s)%s on %s\n", len(c.byFunc), c.kindsSummary(), addr)
	if err := a.serve(ctx, l, a.handler(c, nil)); err != nil {
		fmt.Fprintf(stderr, "serve: %v\n", err)
		return 1
	}
	return 0
}

// problems flattens joined errors into their leaves' parents: the list a
// user should see, one per line.
func problems(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		if _, isRule := err.(*ruleError); !isRule {
			var out []error
			for _, e := range j.Unwrap() {
				out = append(out, problems(e)...)
			}
			return out
		}
	}
	return []error{err}
}
