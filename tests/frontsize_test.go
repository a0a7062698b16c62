package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The sizes the MCP front keeps so that one engineer can hold each part in
// mind (docs/architecture.md "Inside host/"): host/ is the composition root,
// every package under host/internal does one job, and no type gathers every
// concern of the front.
const (
	maxHostTopFiles       = 10
	maxInternalPkgLines   = 4000
	maxMethodsPerHostType = 40
)

// goFiles lists the non-test .go files directly in dir.
func goFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var files []string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		files = append(files, filepath.Join(dir, name))
	}
	return files
}

// packageDirs lists every directory under root (root included) that holds
// non-test Go files, skipping testdata.
func packageDirs(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if len(goFiles(t, p)) > 0 {
			dirs = append(dirs, p)
		}
		return nil
	})
	require.NoError(t, err)
	return dirs
}

// countLines counts the lines of the files.
func countLines(t *testing.T, files []string) int {
	t.Helper()
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		n += strings.Count(string(b), "\n")
	}
	return n
}

// methodCounts counts the methods declared on each receiver type of the
// files, by "dir.Type".
func methodCounts(t *testing.T, dir string, files []string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) == 0 {
				continue
			}
			if name := receiverName(fn.Recv.List[0].Type); name != "" {
				counts[dir+"."+name]++
			}
		}
	}
	return counts
}

// receiverName is the type name of a receiver expression: T, *T, T[P], *T[P].
func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// frontSizeProblems lists every size rule the tree under root breaks.
func frontSizeProblems(t *testing.T, root string) []string {
	t.Helper()
	var problems []string
	host := filepath.Join(root, "host")
	if n := len(goFiles(t, host)); n > maxHostTopFiles {
		problems = append(problems, "host/ has "+strconv.Itoa(n)+" non-test files at its top (at most "+strconv.Itoa(maxHostTopFiles)+")")
	}
	internal := filepath.Join(host, "internal")
	for _, dir := range packageDirs(t, internal) {
		rel, err := filepath.Rel(root, dir)
		require.NoError(t, err)
		if n := countLines(t, goFiles(t, dir)); n > maxInternalPkgLines {
			problems = append(problems, rel+" has "+strconv.Itoa(n)+" non-test lines (at most "+strconv.Itoa(maxInternalPkgLines)+")")
		}
	}
	for _, dir := range packageDirs(t, host) {
		rel, err := filepath.Rel(root, dir)
		require.NoError(t, err)
		for typ, n := range methodCounts(t, rel, goFiles(t, dir)) {
			if n > maxMethodsPerHostType {
				problems = append(problems, typ+" has "+strconv.Itoa(n)+" methods (at most "+strconv.Itoa(maxMethodsPerHostType)+")")
			}
		}
	}
	sort.Strings(problems)
	return problems
}

// TestFrontSizes holds the MCP front to the sizes of issue 40: host/ keeps
// at most 10 non-test files at its top (the composition root), no package
// under host/internal holds more than 4,000 non-test lines, and no type
// anywhere under host/ has more than 40 methods.
func TestFrontSizes(t *testing.T) {
	assert.Empty(t, frontSizeProblems(t, ".."))
}

// TestFrontSizesFindsProblems shows the rules bite on a tree built to break
// each of them.
func TestFrontSizesFindsProblems(t *testing.T) {
	root := t.TempDir()
	top := filepath.Join(root, "host")
	big := filepath.Join(top, "internal", "big")
	require.NoError(t, os.MkdirAll(big, 0o755))
	for i := range maxHostTopFiles + 1 {
		name := filepath.Join(top, "f"+strconv.Itoa(i)+".go")
		require.NoError(t, os.WriteFile(name, []byte("package host\n"), 0o644))
	}
	// A test file neither counts as a file at the top nor adds lines.
	require.NoError(t, os.WriteFile(filepath.Join(top, "x_test.go"), []byte("package host\n"), 0o644))
	var src strings.Builder
	src.WriteString("package big\n\ntype T struct{}\n\n")
	for i := range maxMethodsPerHostType + 1 {
		src.WriteString("func (*T) M" + strconv.Itoa(i) + "() {}\n")
	}
	src.WriteString(strings.Repeat("// line\n", maxInternalPkgLines))
	require.NoError(t, os.WriteFile(filepath.Join(big, "big.go"), []byte(src.String()), 0o644))

	problems := frontSizeProblems(t, root)
	require.Len(t, problems, 3, "%q", problems)
	assert.Contains(t, problems[0], "host/ has 11 non-test files")
	assert.Contains(t, problems[1], "host/internal/big has")
	assert.Contains(t, problems[2], "host/internal/big.T has 41 methods")
}
