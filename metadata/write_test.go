package metadata

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeTestFunction(t *testing.T, name, description string) *Function {
	t.Helper()
	fn, err := NewToolFunction(name, &ToolOptions{ToolName: name, Description: description})
	require.NoError(t, err)
	return fn
}

func TestWriteFunctionsWritesAll(t *testing.T) {
	root := filepath.Join(t.TempDir(), "app")
	fns := []*Function{writeTestFunction(t, "a", "first"), writeTestFunction(t, "b", "second")}
	files, err := WriteFunctions(root, fns)
	require.NoError(t, err)
	require.Len(t, files, 2)
	for i, f := range fns {
		got, err := os.ReadFile(files[i])
		require.NoError(t, err)
		want, err := f.Encode()
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got))
		back, err := ReadFunction(filepath.Dir(files[i]), nil)
		require.NoError(t, err)
		assert.Equal(t, f.Name, back.Name)
	}
	entries, err := os.ReadDir(filepath.Join(root, "a"))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary or backup file is left")
}

// TestWriteFunctionsFailureLeavesTheFolderAsItWas: when one file cannot be
// put in place, those already replaced get their earlier content back.
func TestWriteFunctionsFailureLeavesTheFolderAsItWas(t *testing.T) {
	root := t.TempDir()
	_, err := WriteFunctions(root, []*Function{writeTestFunction(t, "a", "old a")})
	require.NoError(t, err)
	before, err := os.ReadFile(filepath.Join(root, "a", FunctionFile))
	require.NoError(t, err)
	// b/function.json is a folder with something in it: it cannot be replaced.
	require.NoError(t, os.MkdirAll(filepath.Join(root, "b", FunctionFile, "x"), 0o755))

	_, err = WriteFunctions(root, []*Function{
		writeTestFunction(t, "a", "new a"),
		writeTestFunction(t, "b", "new b"),
		writeTestFunction(t, "c", "new c"),
	})
	require.Error(t, err)
	var fe *FunctionError
	require.ErrorAs(t, err, &fe)
	assert.Equal(t, "b", fe.Function)

	after, err := os.ReadFile(filepath.Join(root, "a", FunctionFile))
	require.NoError(t, err)
	assert.Equal(t, string(before), string(after), "a keeps its earlier content")
	_, err = os.Stat(filepath.Join(root, "c"))
	assert.True(t, os.IsNotExist(err), "c's folder, made for this write, is gone")
	for _, dir := range []string{"a", "b"} {
		entries, err := os.ReadDir(filepath.Join(root, dir))
		require.NoError(t, err)
		assert.Len(t, entries, 1, "nothing is left beside %s/function.json", dir)
	}
}

func TestWriteFunctionsRefusesBeforeWriting(t *testing.T) {
	root := filepath.Join(t.TempDir(), "app")
	huge := writeTestFunction(t, "huge", strings.Repeat("x", DefaultMaxFunctionFileBytes))
	_, err := WriteFunctions(root, []*Function{writeTestFunction(t, "ok", "fine"), huge, {Name: "empty"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "more than the limit of 1048576")
	assert.ErrorIs(t, err, ErrNoBindings)
	_, statErr := os.Stat(root)
	assert.True(t, os.IsNotExist(statErr), "nothing was written")
}
