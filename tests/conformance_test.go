package tests

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// conformancePkg is the official MCP conformance suite, installed from
// tests/node/package-lock.json.
const conformancePkg = "@modelcontextprotocol/conformance"

// conformanceRevisions are the protocol revisions the suite's server
// scenarios are run at, each with its own expected-failures file.
var conformanceRevisions = []string{"2025-06-18", "2025-11-25", "2026-07-28"}

// requirementSets are the revisions the suite has a requirement set for
// (--requirements: exactly the scenarios that revision requires, scored and
// not scored, frozen at its release); the others run every scenario that
// applies to them (--suite all --spec-version).
var requirementSets = map[string]bool{"2025-11-25": true, "2026-07-28": true}

var conformanceApp once

// conformanceFixture returns the folder of the built tests/conformance app,
// with its own host.json.
func conformanceFixture(t testing.TB) string {
	t.Helper()
	return conformanceApp.get(t, func() (string, error) {
		hostJSON, err := os.ReadFile(filepath.Join("conformance", "host.json"))
		if err != nil {
			return "", err
		}
		return buildApp("conformance", modulePath+"/tests/conformance", hostJSON)
	})
}

// TestConformance runs the server scenarios of the official MCP conformance
// suite against funchost serving the tests/conformance fixture app, once per
// protocol revision: the suite's requirement set where it has one
// (2025-11-25, 2026-07-28), else every scenario (--suite all). The suite itself compares the outcome with
// tests/conformance/expected-failures/<revision>.yaml and exits non-zero on
// a failure that is not listed there and on a listed failure that now
// passes, so the file stays exact.
func TestConformance(t *testing.T) {
	node, dir := nodeBin(t, conformancePkg)
	runConformance(t, node, dir, startHost(t, conformanceFixture(t)))
}

// TestConformanceServe runs the same suite, against the same expected
// failures, on the fixture app serving itself in one process (`handler
// serve`, package serve) from a folder with its host.json alone: one
// process passes what funchost passes.
func TestConformanceServe(t *testing.T) {
	node, dir := nodeBin(t, conformancePkg)
	app := conformanceFixture(t)
	folder := t.TempDir()
	hostJSON, err := os.ReadFile(filepath.Join(app, "host.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(folder, "host.json"), hostJSON, 0o600))
	runConformance(t, node, dir, startServe(t, filepath.Join(app, "handler"), folder, nil))
}

// runConformance runs the suite's server scenarios against h at every
// revision of conformanceRevisions (node and dir from nodeBin).
func runConformance(t *testing.T, node, dir string, h *host) {
	suite := filepath.Join(dir, "node_modules", filepath.FromSlash(conformancePkg), "dist", "index.js")
	for _, rev := range conformanceRevisions {
		t.Run(rev, func(t *testing.T) {
			baseline, err := filepath.Abs(filepath.Join("conformance", "expected-failures", rev+".yaml"))
			require.NoError(t, err)
			require.FileExists(t, baseline)
			out := t.TempDir()
			args := []string{suite, "server", "--url", h.endpoint, "--expected-failures", baseline, "--output-dir", out}
			if requirementSets[rev] {
				args = append(args, "--requirements", rev)
			} else {
				args = append(args, "--suite", "all", "--spec-version", rev)
			}
			code, stdout, stderr := runNode(t, node, dir, args...)
			counts, err := countChecks(out)
			require.NoError(t, err, "reading the suite's results\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
			t.Logf("MCP conformance at %s: %s", rev, counts)
			for _, n := range counts.notable {
				t.Logf("  %s", n)
			}
			require.Equal(t, 0, code, "the conformance suite at %s disagrees with %s\nstdout:\n%s\nstderr:\n%s\nhost console:\n%s",
				rev, baseline, stdout, stderr, h.console.String())
		})
	}
}

// checkCounts tallies the checks of one suite run.
type checkCounts struct {
	scenarios, scenariosFailed int
	status                     map[string]int // SUCCESS, FAILURE, WARNING, SKIPPED, INFO → count
	// notable are the checks that failed or warned: scenario, check, status
	// and message.
	notable []string
}

func (c checkCounts) String() string {
	keys := make([]string, 0, len(c.status))
	for k := range c.status {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", strings.ToLower(k), c.status[k]))
	}
	return fmt.Sprintf("%d scenarios, %d without and %d with a failing check (warnings aside); checks: %s",
		c.scenarios, c.scenarios-c.scenariosFailed, c.scenariosFailed, strings.Join(parts, ", "))
}

// countChecks reads every <scenario>/checks.json the suite wrote under dir.
func countChecks(dir string) (checkCounts, error) {
	c := checkCounts{status: map[string]int{}}
	files, err := filepath.Glob(filepath.Join(dir, "*", "checks.json"))
	if err != nil {
		return c, err
	}
	if len(files) == 0 {
		return c, fmt.Errorf("no checks.json under %s", dir)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return c, err
		}
		var checks []struct {
			ID           string `json:"id"`
			Status       string `json:"status"`
			ErrorMessage string `json:"errorMessage"`
		}
		if err := json.Unmarshal(data, &checks); err != nil {
			return c, fmt.Errorf("decoding %s: %w", f, err)
		}
		c.scenarios++
		failed := false
		for _, ch := range checks {
			c.status[ch.Status]++
			failed = failed || ch.Status == "FAILURE"
			if ch.Status == "FAILURE" || ch.Status == "WARNING" {
				c.notable = append(c.notable, filepath.Base(filepath.Dir(f))+": "+ch.ID+" "+ch.Status+": "+ch.ErrorMessage)
			}
		}
		if failed {
			c.scenariosFailed++
		}
	}
	return c, nil
}
