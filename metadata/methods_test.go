package metadata

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/tablehook"
)

// TestMethodTableIsConsistent checks the facts of the table agree with
// one another: a request has revisions and an example, a notification
// neither; a target parameter goes with a target that has one, a scope or
// span target with a target.
func TestMethodTableIsConsistent(t *testing.T) {
	for _, m := range Methods() {
		require.Same(t, LookupMethod(m.Name), LookupMethod(m.Name))
		if m.Notification() {
			assert.True(t, strings.HasPrefix(m.Name, "notifications/"), m.Name)
			assert.Empty(t, m.Since+m.Until+m.Example+m.Capability+m.NameParam, m.Name)
			assert.Equal(t, TargetNone, m.Target, m.Name)
			continue
		}
		assert.NotEmpty(t, m.Since, m.Name)
		assert.NotEmpty(t, m.Example, m.Name)
		if m.Scoped || m.SpanTarget || m.Worker == WorkerInvoke {
			assert.NotEqual(t, TargetNone, m.Target, m.Name)
			assert.NotEmpty(t, m.NameParam, m.Name)
		}
	}
	assert.Nil(t, LookupMethod("no/such"))
	assert.True(t, WorkerAnswers(MethodComplete))
	assert.False(t, WorkerAnswers(MethodToolsCall))
	assert.False(t, WorkerAnswers("no/such"))
}

// TestMethodNamesOnlyInTable fails for every string literal of host/'s and
// worker/'s non-test Go code whose value is the name of a method or
// notification of the table: per-method knowledge is read from the table
// (its constants and [LookupMethod]), so a new method is one entry here
// and not a hunt through the concerns that switch on names.
func TestMethodNamesOnlyInTable(t *testing.T) {
	names := map[string]bool{MethodElicitationCreate: true, MethodSamplingCreate: true, MethodRootsList: true}
	for _, m := range Methods() {
		names[m.Name] = true
	}
	var found []string
	for _, root := range []string{"../host", "../worker"} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == "testdata" {
				return filepath.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				if v, err := strconv.Unquote(lit.Value); err == nil && names[v] {
					found = append(found, fset.Position(lit.Pos()).String()+": "+lit.Value)
				}
				return true
			})
			return nil
		})
		require.NoError(t, err)
	}
	assert.Empty(t, found, "method names written outside metadata/methods.go")
}

// TestAddedMethodJoinsEveryView: an entry a test adds through
// internal/tablehook is in Methods and LookupMethod, until restore takes
// it out of both.
func TestAddedMethodJoinsEveryView(t *testing.T) {
	const name = "test/added"
	before := len(Methods())
	restore := tablehook.AddMethod(MethodSpec{Name: name, Since: RevisionFirst, NameParam: "name", Target: TargetTool, Scoped: true})
	require.NotNil(t, LookupMethod(name))
	assert.Len(t, Methods(), before+1)
	assert.True(t, LookupMethod(name).Scoped)
	restore()
	assert.Nil(t, LookupMethod(name))
	assert.Len(t, Methods(), before)
	for _, m := range Methods() {
		assert.NotEqual(t, name, m.Name)
	}
}
