package host

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// logLoadFailure writes one log line naming the function, tool, file and reason.
func (h *Host) logLoadFailure(err error) {
	var te *binding.ToolError
	var fe *metadata.FunctionError
	var le *binding.LoadError
	switch {
	case errors.As(err, &le):
		h.log.Error(le.Kind+" not served: "+jsonx.OneLine(err.Error()),
			"function", le.Function, le.Kind, le.Name, "file", le.File, "reason", jsonx.OneLine(errString(le.Err)))
	case errors.As(err, &te):
		h.log.Error("tool not served: "+jsonx.OneLine(err.Error()),
			"function", te.Function, "tool", te.Tool, "file", te.File, "reason", jsonx.OneLine(errString(te.Err)))
	case errors.As(err, &fe):
		h.log.Error("function not loaded: "+jsonx.OneLine(err.Error()),
			"function", fe.Function, "file", fe.File, "reason", jsonx.OneLine(errString(fe.Err)))
	default:
		h.log.Error("function not loaded: " + jsonx.OneLine(err.Error()))
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// Status reports the host's state and what it serves.
func (h *Host) Status() *Status {
	tel := *h.telSummary
	st := &Status{
		State:           h.state.Load().(State),
		Reason:          h.unhealthyReason(),
		ToolsServed:     len(h.cat.Tools()),
		ToolsFailed:     len(h.cat.Failures()),
		ResourcesServed: len(h.cat.ResourceEntries()) + len(h.cat.TemplateEntries()),
		PromptsServed:   len(h.cat.PromptEntries()),
		Functions:       h.cat.Functions(),
		Errors:          []string{},
		Telemetry:       &tel,
	}
	for _, e := range h.cat.Failures() {
		st.Errors = append(st.Errors, jsonx.OneLine(e.Error()))
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

// printFunctions writes the function list and one line per load failure.
func (h *Host) printFunctions() {
	var sb strings.Builder
	sb.WriteString("Functions:\n\n")
	funcs := h.cat.Functions()
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
	// Each failure is said once, by logLoadFailure, as an ERROR log line.
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
