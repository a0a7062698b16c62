package status

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/host/internal/catalog"
	"github.com/funcmcp/funcmcp/host/internal/telemetry"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

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

// TelemetryStatus says whether telemetry is on and where funchost and its
// worker export, as GET /admin/host/status reports it and funchost prints
// it at start; it holds no header and no credentials of an endpoint.
type TelemetryStatus = telemetry.Summary

// Status is the body of GET /admin/host/status.
type Status struct {
	State       State  `json:"state"`
	Reason      string `json:"reason,omitempty"` // why the state is Unhealthy
	ToolsServed int    `json:"toolsServed"`
	// ToolsFailed counts every function not served because it failed to
	// load, whatever its kind.
	ToolsFailed int `json:"toolsFailed"`
	// ResourcesServed counts resources and resource templates,
	// PromptsServed prompts.
	ResourcesServed int              `json:"resourcesServed"`
	PromptsServed   int              `json:"promptsServed"`
	Functions       []FunctionStatus `json:"functions"`
	Errors          []string         `json:"errors"`
	// Telemetry is on or off, and where each process exports.
	Telemetry *TelemetryStatus `json:"telemetry"`
}

// Board keeps what the host reports of itself: its state, the worker's
// health, the problems met while running; it answers GET
// /admin/host/status and writes the function list and the load failures.
type Board struct {
	cat  *catalog.Catalog
	root string
	tel  *telemetry.Summary
	log  *slog.Logger
	out  *Console
	// wake is called when the worker turns unhealthy: calls waiting for a
	// worker fail now.
	wake func()

	state  atomic.Value           // State
	reason atomic.Pointer[string] // non-empty while unhealthy

	mu         sync.Mutex
	liveErrors []string // the latest problems met while running (worker exits)
}

// NewBoard returns the board of the app of cat under root (paths under it
// are reported relative to it), whose telemetry tel summarizes; lines go
// to log and out, and wake is called when the worker turns unhealthy. The
// state is StateStarting.
func NewBoard(cat *catalog.Catalog, root string, tel *telemetry.Summary, log *slog.Logger, out *Console, wake func()) *Board {
	b := &Board{cat: cat, root: root, tel: tel, log: log, out: out, wake: wake}
	b.state.Store(StateStarting)
	return b
}

// State returns the host's state.
func (b *Board) State() State { return b.state.Load().(State) }

// Set sets the host's state.
func (b *Board) Set(s State) { b.state.Store(s) }

// Reason returns why the worker is unhealthy, "" when it is not.
func (b *Board) Reason() string {
	if r := b.reason.Load(); r != nil {
		return *r
	}
	return ""
}

// Unhealthy records that the worker keeps failing, and why.
func (b *Board) Unhealthy(reason string) {
	b.reason.Store(&reason)
	b.state.Store(StateUnhealthy)
	if b.wake != nil {
		b.wake() // calls waiting for a worker fail now
	}
}

// Healthy records that the worker is healthy again.
func (b *Board) Healthy() {
	if b.reason.Swap(nil) != nil {
		b.state.CompareAndSwap(StateUnhealthy, StateRunning)
	}
}

// Console serializes writes of whole lines to the host's output: the
// host's own lines and the worker's.
type Console struct {
	mu sync.Mutex
	w  io.Writer
}

// NewConsole returns the console writing to w.
func NewConsole(w io.Writer) *Console { return &Console{w: w} }

// Printf writes a formatted line (or lines) at once.
func (c *Console) Printf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fmt.Fprintf(c.w, format, args...)
}

// Write writes p (one whole line) at once.
func (c *Console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.w.Write(p)
}

// LogLoadFailure writes one log line naming the function, tool, file and reason.
func (b *Board) LogLoadFailure(err error) {
	var te *binding.ToolError
	var fe *metadata.FunctionError
	var le *binding.LoadError
	switch {
	case errors.As(err, &le):
		b.log.Error(le.Kind+" not served: "+jsonx.OneLine(err.Error()),
			"function", le.Function, le.Kind, le.Name, "file", le.File, "reason", jsonx.OneLine(errString(le.Err)))
	case errors.As(err, &te):
		b.log.Error("tool not served: "+jsonx.OneLine(err.Error()),
			"function", te.Function, "tool", te.Tool, "file", te.File, "reason", jsonx.OneLine(errString(te.Err)))
	case errors.As(err, &fe):
		b.log.Error("function not loaded: "+jsonx.OneLine(err.Error()),
			"function", fe.Function, "file", fe.File, "reason", jsonx.OneLine(errString(fe.Err)))
	default:
		b.log.Error("function not loaded: " + jsonx.OneLine(err.Error()))
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Report reports the host's state and what it serves.
func (b *Board) Report() *Status {
	tel := *b.tel
	st := &Status{
		State:           b.State(),
		Reason:          b.Reason(),
		ToolsServed:     len(b.cat.Tools()),
		ToolsFailed:     len(b.cat.Failures()),
		ResourcesServed: len(b.cat.ResourceEntries()) + len(b.cat.TemplateEntries()),
		PromptsServed:   len(b.cat.PromptEntries()),
		Functions:       b.cat.Functions(),
		Errors:          []string{},
		Telemetry:       &tel,
	}
	for _, e := range b.cat.Failures() {
		st.Errors = append(st.Errors, jsonx.OneLine(e.Error()))
	}
	b.mu.Lock()
	st.Errors = append(st.Errors, b.liveErrors...)
	b.mu.Unlock()
	return st
}

// Ping answers GET /admin/host/ping, the health probe of a platform (a
// load balancer, a container's readiness and liveness probes): 200 while
// the host takes calls (Running), 503 while it starts, stops or its worker
// keeps failing (Unhealthy), so that traffic goes to another instance. The
// body is the state alone: the probe needs no key and learns nothing else.
func (b *Board) Ping(w http.ResponseWriter, _ *http.Request) {
	state := b.State()
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if state != StateRunning {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_, _ = w.Write([]byte(string(state) + "\n"))
}

// ServeHTTP answers GET /admin/host/status with the report.
func (b *Board) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	// The status names files relative to the script root: the machine's
	// folders are nobody's business over HTTP.
	st := b.Report()
	for i := range st.Errors {
		st.Errors[i] = b.relative(st.Errors[i])
	}
	for i := range st.Functions {
		st.Functions[i].Error = b.relative(st.Functions[i].Error)
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
func (b *Board) relative(msg string) string {
	return strings.ReplaceAll(msg, b.root+string(filepath.Separator), "")
}

// PrintFunctions writes the function list to the console; each load
// failure is said by LogLoadFailure.
func (b *Board) PrintFunctions() {
	var sb strings.Builder
	sb.WriteString("Functions:\n\n")
	funcs := b.cat.Functions()
	for _, f := range funcs {
		what := ""
		switch {
		case f.Tool != "":
			what = " (tool " + f.Tool + ")"
		case f.Resource != "":
			what = " (resource " + f.Resource + ")"
		case f.Prompt != "":
			what = " (prompt " + f.Prompt + ")"
		}
		switch {
		case f.Served:
			fmt.Fprintf(&sb, "  %s: %s%s\n", f.Name, f.Trigger, what)
		case f.Disabled != "":
			fmt.Fprintf(&sb, "  %s: %s%s (disabled: %s)\n", f.Name, cmp.Or(f.Trigger, "no trigger"), what, f.Disabled)
		case f.Error != "":
			if f.Trigger != "" {
				fmt.Fprintf(&sb, "  %s: %s%s (not served: see its ERROR line)\n", f.Name, f.Trigger, what)
			} else {
				fmt.Fprintf(&sb, "  %s: (not loaded: see its ERROR line)\n", f.Name)
			}
		default:
			fmt.Fprintf(&sb, "  %s: %s (not served: only MCP tool, resource and prompt functions are)\n", f.Name, cmp.Or(f.Trigger, "no trigger"))
		}
	}
	if len(funcs) == 0 {
		sb.WriteString("  (none)\n")
	}
	sb.WriteString("\n")
	// Each failure is said once, by LogLoadFailure, as an ERROR log line.
	b.out.Printf("%s", sb.String())
}

// maxLiveErrors bounds the problems kept for /admin/host/status: a worker
// that keeps crashing adds one each time, for as long as the host runs.
const maxLiveErrors = 50

// AddLiveError records msg, forgetting the oldest beyond maxLiveErrors.
func (b *Board) AddLiveError(msg string) {
	b.mu.Lock()
	if len(b.liveErrors) >= maxLiveErrors {
		n := copy(b.liveErrors, b.liveErrors[len(b.liveErrors)-maxLiveErrors+1:])
		b.liveErrors = b.liveErrors[:n]
	}
	b.liveErrors = append(b.liveErrors, msg)
	b.mu.Unlock()
}
