package worker

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// testify cannot be imported in this module yet (its own dependencies are not
// in go.sum), so these small helpers play the parts of require and assert.

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func requireNoError(t testing.TB, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", what, err)
	}
}

func normJSON(t testing.TB, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// assertJSONEq reports whether two JSON texts mean the same.
func assertJSONEq(t testing.TB, want, got string, what string) bool {
	t.Helper()
	if w, g := normJSON(t, want), normJSON(t, got); w != g {
		t.Errorf("%s: JSON differs\nwant: %s\ngot:  %s", what, w, g)
		return false
	}
	return true
}

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		requireNoError(t, os.MkdirAll(filepath.Dir(path), 0o755), "mkdir testdata")
		requireNoError(t, os.WriteFile(path, got, 0o644), "write golden")
		return
	}
	want, err := os.ReadFile(path)
	requireNoError(t, err, "read golden (run go test -update)")
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from the golden file (run go test -update to accept)\nwant:\n%s\ngot:\n%s", path, want, got)
	}
}
