package main

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestEmittedMetadata compares every function.json the sample emits with
// testdata/<function>.function.json (go test -update rewrites them).
func TestEmittedMetadata(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, newApp().EmitMetadata(dir))
	emitted, err := filepath.Glob(filepath.Join(dir, "*", "function.json"))
	require.NoError(t, err)
	require.Len(t, emitted, 20, "one function per tool, resource and prompt, and bar_chart's view")
	for _, file := range emitted {
		fn := filepath.Base(filepath.Dir(file))
		t.Run(fn, func(t *testing.T) {
			got, err := os.ReadFile(file)
			require.NoError(t, err)
			golden := filepath.Join("testdata", fn+".function.json")
			if *update {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(golden, got, 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err, "run go test -update to create it")
			assert.Equal(t, string(want), string(got))
		})
	}
}
