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
				if firsts = firstCollection.FindAllString(h.console.String(), -1); len(firsts) >= tc.processes {
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
