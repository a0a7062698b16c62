package tests

import (
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// firstCollection is a process's first line of GODEBUG=gctrace=1, with the
// worker's relayed by funchost under its "[handler] " prefix.
var firstCollection = regexp.MustCompile(`(?m)^(\[handler\] )?gc 1 @.*$`)

// wholeLines are what a process's console gets in one write each: a line
// of the worker relayed by funchost, and the log's lines (written in
// batches of whole lines).
var wholeLines = regexp.MustCompile(`\[handler\] [^\n]*\n|time=[^\n]*\n`)

// firstCollections finds each process's first gctrace line in a console.
// The runtime writes a trace line in several pieces, so a relayed line or
// a batch of log lines may land between them ("gc [handler] gc 1 @… \n1
// @…"): the relayed lines are read on their own, and the rest is read with
// every whole line taken out, which puts the pieces back together.
func firstCollections(console string) []string {
	var firsts []string
	for _, line := range wholeLines.FindAllString(console, -1) {
		firsts = append(firsts, firstCollection.FindAllString(line, -1)...)
	}
	return append(firsts, firstCollection.FindAllString(wholeLines.ReplaceAllString(console, ""), -1)...)
}

// TestStartRunsNoCollection: funchost, its worker and the one process hold
// the collector off while they start (internal/startgc): each process's
// first collection is the forced one that ends the hold a little after it
// serves, not one the start's garbage set off. Calls are answered
// meanwhile. (Before the hold, each ran its first collection in the
// schema library's package init.)
func TestStartRunsNoCollection(t *testing.T) {
	t.Parallel()
	app := sample(t)
	// GOGC or GOMEMLIMIT set keeps the settings a process was given.
	env := []string{"GODEBUG=gctrace=1", "GOGC=", "GOMEMLIMIT="}
	for _, tc := range []struct {
		name      string
		processes int
		start     func(t *testing.T) *host
	}{
		{"funchost", 2, func(t *testing.T) *host { return startHostEnv(t, app, env) }},
		{"serve", 1, func(t *testing.T) *host {
			return startServe(t, filepath.Join(app, "handler"), serveFolder(t, app, filepath.Join("..", "function-app-sample")), env)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.start(t)
			req, err := http.NewRequest(http.MethodPost, h.endpoint, strings.NewReader(
				`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo","units":"metric","days":2,"date":"2026-05-17"}}}`))
			require.NoError(t, err)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
			resp, err := postClient.Do(req)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			require.NoError(t, err)
			assert.Contains(t, string(body), `"structuredContent"`)

			var firsts []string
			deadline := time.Now().Add(20 * time.Second)
			for time.Now().Before(deadline) {
				if firsts = firstCollections(h.console.String()); len(firsts) >= tc.processes {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			require.Len(t, firsts, tc.processes, "each process's first collection:\n%s", h.console.String())
			for _, line := range firsts {
				assert.True(t, strings.HasSuffix(line, "(forced)"), "the first collection ended the hold: %s", line)
			}
		})
	}
}

// TestFirstCollectionsOfInterleavedConsoles: the console of a failed CI
// run, where funchost's own trace line was cut by the worker's relayed one,
// and one cut by a log line, still give each process's first collection.
func TestFirstCollectionsOfInterleavedConsoles(t *testing.T) {
	const (
		worker = "[handler] gc 1 @0.112s 0%: 0.038+1.7+0.003 ms clock, 4->4->1 MB, 4 MB goal, 1 P (forced)"
		own    = "gc 1 @0.133s 0%: 0.010+0.98+0.007 ms clock, 4->4->1 MB, 4 MB goal, 1 P (forced)"
		log    = `time=2026-12-07T01:42:06.433Z level=INFO msg="Executed 'Functions.get_weather' (Succeeded)"` + "\n"
	)
	for name, console := range map[string]string{
		"whole":                 log + own + "\n" + worker + "\n",
		"cut by a relayed line": log + own[:3] + worker + "\n" + own[3:] + "\n",
		"cut by a log line":     worker + "\n" + own[:17] + log + own[17:] + "\n" + log,
	} {
		assert.ElementsMatch(t, []string{worker, own}, firstCollections(console), name)
	}
}

// TestStartHoldBeginsBeforeTheSchemaLibrary: in funchost and in an app's
// binary, the hold's init (internal/startgc) runs before the init of the
// schema library, which compiles its metaschemas there (1.7 MB in 21,000
// allocations): it holds the collector for all of it.
func TestStartHoldBeginsBeforeTheSchemaLibrary(t *testing.T) {
	t.Parallel()
	for name, cmd := range map[string][]string{
		"funchost":   {funchost(t), "version"},
		"the sample": {filepath.Join(sample(t), "handler"), "help"},
	} {
		c := exec.Command(cmd[0], cmd[1:]...)
		c.Env = append(os.Environ(), "GODEBUG=inittrace=1")
		out, err := c.CombinedOutput()
		require.NoError(t, err, "%s: %s", name, out)
		order := map[string]int{}
		for i, m := range initLine.FindAllStringSubmatch(string(out), -1) {
			order[m[1]] = i + 1
		}
		hold, lib := order[modulePath+"/internal/startgc"], order["github.com/santhosh-tekuri/jsonschema/v6"]
		require.NotZero(t, hold, "%s initialises internal/startgc", name)
		require.NotZero(t, lib, "%s initialises the schema library", name)
		assert.Less(t, hold, lib, "%s: the hold's init comes first", name)
	}
}
