package bench

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// peerServer is a server that BenchmarkToolsCall, BenchmarkMemory_c64 and
// BenchmarkStartup/sample run beside funchost and the SDK, as a process of
// its own started from a command line. Adding one is adding an entry to
// peerServers; the peers table already has a column for each of
// peerColumns.
type peerServer struct {
	// name is its column in the peers table (one of peerColumns) and its
	// target name in the benchmarks.
	name string
	// command is its command line serving the tools of toolsFile (the
	// definitions funchost lists, written for the SDK server), and the
	// folder it runs in ("": the benchmark's).
	command func(toolsFile string) (argv []string, dir string)
	// ownTools: it serves the tools of the app it is (the sample's), not
	// those of toolsFile, so it cannot be given other schemas.
	ownTools bool
	// ready matches the output line it prints once it accepts
	// connections; its first group is the base URL (http://127.0.0.1:port).
	ready *regexp.Regexp
	// path is its MCP endpoint under the base URL.
	path string
}

// peerServers are the servers run beside funchost and the SDK: mcp-go,
// and the sample app serving MCP itself in one process (`handler serve`,
// package serve), run from the app folder as `make build`'s
// dist/app/handler would be.
var peerServers = []peerServer{
	{
		name:  "mcp-go",
		ready: sdkLine,
		path:  "/mcp",
		command: func(toolsFile string) ([]string, string) {
			return []string{built.mcpgo, "-tools", toolsFile}, ""
		},
	},
	{
		name:     "one process",
		ready:    endpointLine,
		path:     endpointPath,
		ownTools: true,
		command: func(string) ([]string, string) {
			return []string{built.handler, "serve", "--port", "0"}, built.app
		},
	},
}

// The peers table's columns: funchost, the official SDK (the better of its
// stateless and stateful servers on each figure), and each peerServers
// name; a column with no server reads "–".
const (
	colFunchost   = "funchost"
	colSDK        = "SDK"
	colMCPGo      = "mcp-go"
	colOneProcess = "one process"
)

var peerColumns = []string{colFunchost, colSDK, colMCPGo, colOneProcess}

// peerRatios are the ratios the peers table prints, server over peer.
var peerRatios = [][2]string{
	{colFunchost, colSDK}, {colFunchost, colMCPGo}, {colOneProcess, colSDK}, {colOneProcess, colMCPGo},
}

// peerProc is a running peer server: the process its command line started
// and everything under it.
type peerProc struct {
	*proc
	name     string
	base     string
	endpoint string
}

// pids are the server's processes: the one started and its descendants.
func (p *peerProc) pids() []int { return append([]int{p.pid()}, descendants(p.pid())...) }

// startPeer starts s serving the tools of toolsFile and waits for its
// ready line.
func startPeer(s peerServer, toolsFile string) (*peerProc, error) {
	argv, dir := s.command(toolsFile)
	p, waits, err := startProcIn(dir, argv[0], argv[1:], os.Environ(), s.ready)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", s.name, err)
	}
	m, err := p.await(waits[0], "its ready line")
	if err != nil {
		p.stop()
		return nil, fmt.Errorf("starting %s: %w", s.name, err)
	}
	return &peerProc{proc: p, name: s.name, base: m[1], endpoint: m[1] + s.path}, nil
}

// buildModule builds the main package of the module in dir (a folder of
// tests/bench with a go.mod of its own) into out.
func buildModule(out, dir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, ".")
	cmd.Dir = dir
	var buf strings.Builder
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building tests/bench/%s: %w\n%s", filepath.Base(dir), err, buf.String())
	}
	return nil
}

// peerGoal is a goal of issue 43 on one ratio of the peers table: server
// over peer at least (or at most) x.
type peerGoal struct {
	server, peer string
	atLeast      bool
	x            float64
}

func (g peerGoal) String() string {
	op := "≤"
	if g.atLeast {
		op = "≥"
	}
	return fmt.Sprintf("%s %s %g× %s", g.server, op, g.x, g.peer)
}

// peerRow is a figure of the peers table: each server's value over the
// whole run, and per interleaved round.
type peerRow struct {
	what, unit string
	value      map[string]float64   // by column; absent: not measured
	rounds     []map[string]float64 // the same figure in each round
	goals      []peerGoal
	load       string
	note       string
}

var peerTable struct {
	mu   sync.Mutex
	rows []peerRow
}

// recordPeers adds or replaces (same what) a row of the peers table.
func recordPeers(r peerRow) {
	peerTable.mu.Lock()
	defer peerTable.mu.Unlock()
	for i := range peerTable.rows {
		if peerTable.rows[i].what == r.what {
			peerTable.rows[i] = r
			return
		}
	}
	peerTable.rows = append(peerTable.rows, r)
}

// peerFigures turns the samples of an interleaved run into a peers row's
// values and rounds: f of each target, the SDK's column being the better
// (by better) of its two servers.
func peerFigures(res map[string]*sample, f func(*sample) float64, better func(a, b float64) float64) (map[string]float64, []map[string]float64) {
	of := func(m map[string]*sample) map[string]float64 {
		out := map[string]float64{}
		if s := m["funcmcp"]; s != nil {
			out[colFunchost] = f(s)
		}
		if sl, sf := m["sdk-stateless"], m["sdk-stateful"]; sl != nil && sf != nil {
			out[colSDK] = better(f(sl), f(sf))
		}
		for _, p := range peerServers {
			if s := m[p.name]; s != nil {
				out[p.name] = f(s)
			}
		}
		return out
	}
	var rounds []map[string]float64
	for _, r := range roundsOf(res) {
		rounds = append(rounds, of(r))
	}
	return of(res), rounds
}

// roundsOf is rounds restricted to the targets the peers table shows.
func roundsOf(res map[string]*sample) []map[string]*sample {
	shown := map[string]*sample{}
	for name, s := range res {
		if name == "funcmcp" || strings.HasPrefix(name, "sdk-") || isPeer(name) {
			shown[name] = s
		}
	}
	return rounds(shown)
}

func isPeer(name string) bool {
	return slices.ContainsFunc(peerServers, func(p peerServer) bool { return p.name == name })
}

// ratioCell formats server over peer: the ratio over the whole run, then
// the minimum, median and maximum of the per-round ratios.
func ratioCell(r peerRow, server, peer string) string {
	a, b := r.value[server], r.value[peer]
	if a == 0 || b == 0 {
		return "–"
	}
	var per []float64
	for _, m := range r.rounds {
		if m[server] != 0 && m[peer] != 0 {
			per = append(per, m[server]/m[peer])
		}
	}
	if len(per) == 0 {
		return fmt.Sprintf("%.3g×", a/b)
	}
	slices.Sort(per)
	return fmt.Sprintf("%.3g× (%.3g / %.3g / %.3g)", a/b, per[0], median(per), per[len(per)-1])
}

// median of sorted values.
func median(v []float64) float64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// goalsCell says for each goal of r whether the ratio over the run meets
// it ("–" when a side was not measured).
func goalsCell(r peerRow) string {
	var out []string
	for _, g := range r.goals {
		met := "–"
		if a, b := r.value[g.server], r.value[g.peer]; a != 0 && b != 0 {
			met = yesNo(a/b >= g.x)
			if !g.atLeast {
				met = yesNo(a/b <= g.x)
			}
		}
		out = append(out, g.String()+": "+met)
	}
	if len(out) == 0 {
		return "–"
	}
	return strings.Join(out, "; ")
}

// printPeers writes the peers table as Markdown.
func printPeers(w io.Writer) {
	peerTable.mu.Lock()
	defer peerTable.mu.Unlock()
	if len(peerTable.rows) == 0 {
		return
	}
	fmt.Fprintf(w, "\nfuncmcp beside both Go peers, get_weather with input and output validation on in every server: "+
		"the official Go SDK v1.8.0 (the better of its stateless and stateful servers) and mark3labs/mcp-go v1.2.1 (stateless); "+
		"ratios over the run, then (min / median / max) over the interleaved rounds (load now %s)\n\n", loadAvg())
	fmt.Fprint(w, "| figure | unit")
	for _, c := range peerColumns {
		fmt.Fprintf(w, " | %s", c)
	}
	for _, r := range peerRatios {
		fmt.Fprintf(w, " | %s / %s", r[0], r[1])
	}
	fmt.Fprintln(w, " | goals (issue 43), met | rounds | load |")
	fmt.Fprint(w, "|---|---")
	fmt.Fprint(w, strings.Repeat("|---:", len(peerColumns)+len(peerRatios)))
	fmt.Fprintln(w, "|---|---:|---:|")
	for _, r := range peerTable.rows {
		fmt.Fprintf(w, "| %s | %s", r.what, r.unit)
		for _, c := range peerColumns {
			fmt.Fprintf(w, " | %s", num(r.value[c]))
		}
		for _, p := range peerRatios {
			fmt.Fprintf(w, " | %s", ratioCell(r, p[0], p[1]))
		}
		fmt.Fprintf(w, " | %s | %d | %s |\n", goalsCell(r), len(r.rounds), r.load)
	}
	for _, r := range peerTable.rows {
		if r.note != "" {
			fmt.Fprintf(w, "\n%s: %s", r.what, r.note)
		}
	}
	fmt.Fprintln(w)
}

// The better of two figures: the higher (throughput) or the lower (CPU,
// memory, time).
func higher(a, b float64) float64 { return max(a, b) }
func lower(a, b float64) float64  { return min(a, b) }

// recordPeerCalls records the tools/call throughput and server CPU rows of
// the peers table at concurrency c, with issue 43's goals.
func recordPeerCalls(c int, res map[string]*sample, load string) {
	tputGoals := []peerGoal{{colFunchost, colSDK, true, 1.3}, {colOneProcess, colMCPGo, true, 1.2}}
	cpuGoals := []peerGoal{{colOneProcess, colMCPGo, false, 0.8}}
	if c > 1 {
		tputGoals = []peerGoal{{colFunchost, colSDK, true, 2.5}, {colOneProcess, colMCPGo, true, 1.3}}
		cpuGoals = []peerGoal{{colFunchost, colSDK, false, 0.45}, {colOneProcess, colMCPGo, false, 0.8}}
	}
	v, rs := peerFigures(res, (*sample).perSecond, higher)
	recordPeers(peerRow{what: fmt.Sprintf("tools/call throughput, c=%d", c), unit: "calls/s", value: v, rounds: rs, goals: tputGoals, load: load})
	v, rs = peerFigures(res, func(s *sample) float64 { return us(s.cpuPerCall()) }, lower)
	recordPeers(peerRow{what: fmt.Sprintf("server CPU per call, c=%d", c), unit: "µs", value: v, rounds: rs, goals: cpuGoals, load: load,
		note: "every process of a server's tree (funchost: funchost + reaper + worker), from /proc/<pid>/task/*/schedstat"})
	v, rs = peerFigures(res, (*sample).switchesPerCall, lower)
	recordPeers(peerRow{what: fmt.Sprintf("context switches per call, c=%d", c), unit: "switches", value: v, rounds: rs, load: load,
		note: "voluntary and not, of every thread of a server's tree, from /proc/<pid>/task/*/status: a Go server's threads sleeping and waking, which a call at c=1 pays for"})
}

// recordPeerMemory records the Pss row of the peers table from
// BenchmarkMemory_c64's samples.
func recordPeerMemory(res map[string]*sample, load string) {
	v, rs := peerFigures(res, func(s *sample) float64 { return float64(s.pss) / (1 << 20) }, lower)
	recordPeers(peerRow{what: "Pss under tools/call, c=64", unit: "MiB", value: v, rounds: rs, load: load,
		goals: []peerGoal{{colFunchost, colSDK, false, 2.0}, {colOneProcess, colSDK, false, 1.2}},
		note:  "the largest summed smaps_rollup Pss of a server's processes in each round, sampled every 5 ms"})
}

// recordPeerStart records the cold start row of the peers table: lat[i] are
// the start times of server names[i], one per round.
func recordPeerStart(names []string, lat []*sample, load string) {
	n := len(lat[0].lat)
	v := map[string]float64{}
	rs := make([]map[string]float64, n)
	for i := range rs {
		rs[i] = map[string]float64{}
	}
	for j, name := range names {
		v[name] = us(lat[j].pct(50)) / 1000
		for i, d := range lat[j].lat[:n] {
			rs[i][name] = us(d) / 1000
		}
	}
	recordPeers(peerRow{what: "cold start, exec → first tools/call", unit: "ms p50", value: v, rounds: rs, load: load,
		goals: []peerGoal{{colFunchost, colSDK, false, 2.5}, {colOneProcess, colSDK, false, 1.2}},
		note:  "the sample's tool definitions in every server; SDK: its stateless server; the value is the median start, the ratio over the run the medians'"})
}
