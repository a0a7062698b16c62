package bench

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
)

// row is one line of the ratio table: a figure of funcmcp, the same figure
// of the SDK baseline(s) measured in the same run, and the goal.
type row struct {
	what      string  // the figure
	unit      string  // its unit
	ours      float64 // funcmcp
	stateless float64 // SDK stateless server (0: not measured)
	stateful  float64 // SDK stateful server (0: not measured)
	// ratio is the figure the goal is about (ours / the SDK server the goal
	// compares with); NaN-free: 0 when there is none.
	ratio  float64
	goal   string // "≥ 1.2×", "≤ 0.8×", … ("" when none)
	met    string // "yes", "no", or "" when there is no goal
	load   string // 1-minute load average when measured
	detail string // how the ratio was formed
	// spread is the range of the ratio (or of funcmcp's figure, for a row
	// without one) over the interleaved rounds: "lo–hi (n rounds)".
	spread string
}

var table struct {
	mu   sync.Mutex
	rows []row
	keys map[string]int
}

// record adds or replaces (same what) a row of the table.
func record(r row) {
	table.mu.Lock()
	defer table.mu.Unlock()
	if table.keys == nil {
		table.keys = map[string]int{}
	}
	if i, ok := table.keys[r.what]; ok {
		table.rows[i] = r
		return
	}
	table.keys[r.what] = len(table.rows)
	table.rows = append(table.rows, r)
}

// atLeast and atMost fill in a row's goal and whether the ratio meets it.
func atLeast(r row, goal float64) row {
	r.goal = fmt.Sprintf("≥ %g×", goal)
	r.met = yesNo(r.ratio >= goal)
	return r
}

func atMost(r row, goal float64) row {
	r.goal = fmt.Sprintf("≤ %g×", goal)
	r.met = yesNo(r.ratio <= goal)
	return r
}

// below fills in a goal on funcmcp's own figure: less than limit (in the
// row's unit).
func below(r row, limit float64, limitText string) row {
	r.goal = "< " + limitText
	r.met = yesNo(r.ours < limit)
	return r
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

// oursNum formats funcmcp's figure, which is always measured.
func oursNum(v float64) string {
	if v == 0 {
		return "0"
	}
	return num(v)
}

// num formats an SDK figure; 0 means not measured.
func num(v float64) string {
	switch {
	case v == 0:
		return "–"
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.3g", v)
	}
}

// printTable writes the table as Markdown.
func printTable(w io.Writer) {
	table.mu.Lock()
	defer table.mu.Unlock()
	if len(table.rows) == 0 {
		return
	}
	host, _ := os.Hostname()
	fmt.Fprintf(w, "\nfuncmcp vs the official Go SDK v1.8.0, same machine, same run (%s, load now %s)\n\n", host, loadAvg())
	fmt.Fprintln(w, "| figure | unit | funcmcp | SDK stateless | SDK stateful | ratio | goal | met | spread over rounds | load | ratio is |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---|---|---|---:|---|")
	for _, r := range table.rows {
		ratio := "–"
		if r.ratio != 0 {
			ratio = fmt.Sprintf("%.3g×", r.ratio)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.what, r.unit, oursNum(r.ours), num(r.stateless), num(r.stateful), ratio,
			cmpOr(r.goal, "–"), cmpOr(r.met, "–"), cmpOr(r.spread, "–"), r.load, strings.ReplaceAll(r.detail, "|", "/"))
	}
	fmt.Fprintln(w)
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "funcmcp-bench-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "creating the work folder:", err)
		os.Exit(1)
	}
	workDir = dir
	code := m.Run()
	stopShared()
	validationShare()
	printTable(os.Stdout)
	printPeers(os.Stdout)
	os.RemoveAll(dir)
	os.Exit(code)
}
