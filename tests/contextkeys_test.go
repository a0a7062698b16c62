package tests

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordKey is the one context key of the host that another package may
// reach: the request's record of its caller, which the edge attaches, the
// OAuth guard and the key link fill, and the MCP endpoint reads once.
const recordKey = modulePath + "/host/internal/caller.contextKey"

// contextKey is a context key of a package (a type used as the key of
// context.WithValue or Context.Value) and what reaches it: the exported
// functions of its package that set or read it, directly or through
// another function of the package, and the other packages that call them.
type contextKey struct {
	pkg       string   // import path
	name      string   // the key's type
	accessors []string // the exported functions that reach it
	users     []string // the other packages calling an accessor
}

// scanContextKeys reads the non-test Go files of every package under root
// (a directory of the module modPath) and returns their context keys with
// the packages outside their own that reach them. A key is a type of the
// package written as a composite literal (key{}) in context.WithValue or
// in a Value call; a function reaches it when it writes that call or calls
// a function of its package that reaches it.
func scanContextKeys(root, modPath string) ([]contextKey, error) {
	type pkgFiles struct {
		path  string
		files []*ast.File
	}
	pkgs := map[string]*pkgFiles{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return fmt.Errorf("parsing %s: %w", p, err)
		}
		rel, err := filepath.Rel(root, filepath.Dir(p))
		if err != nil {
			return err
		}
		imp := path.Join(modPath, filepath.ToSlash(rel))
		if pkgs[imp] == nil {
			pkgs[imp] = &pkgFiles{path: imp}
		}
		pkgs[imp].files = append(pkgs[imp].files, f)
		return nil
	})
	if err != nil {
		return nil, err
	}

	// keyOf returns the local type a key expression names, "" for any
	// other expression.
	keyOf := func(e ast.Expr) string {
		if cl, ok := e.(*ast.CompositeLit); ok {
			if id, ok := cl.Type.(*ast.Ident); ok {
				return id.Name
			}
		}
		return ""
	}
	var keys []contextKey
	exported := map[string]map[string][]string{} // package → accessor → its keys
	for _, p := range pkgs {
		// direct: function → the keys its body writes; calls: function →
		// the names it calls.
		direct := map[string][]string{}
		calls := map[string][]string{}
		funcs := map[string]bool{}
		for _, f := range p.files {
			for _, d := range f.Decls {
				fd, ok := d.(*ast.FuncDecl)
				if !ok || fd.Body == nil {
					continue
				}
				name := fd.Name.Name
				funcs[name] = true
				ast.Inspect(fd.Body, func(n ast.Node) bool {
					call, ok := n.(*ast.CallExpr)
					if !ok {
						return true
					}
					switch fn := call.Fun.(type) {
					case *ast.Ident:
						calls[name] = append(calls[name], fn.Name)
					case *ast.SelectorExpr:
						x, _ := fn.X.(*ast.Ident)
						switch {
						case x != nil && x.Name == "context" && fn.Sel.Name == "WithValue" && len(call.Args) == 3:
							if k := keyOf(call.Args[1]); k != "" {
								direct[name] = append(direct[name], k)
							}
						case fn.Sel.Name == "Value" && len(call.Args) == 1:
							if k := keyOf(call.Args[0]); k != "" {
								direct[name] = append(direct[name], k)
							}
						default:
							calls[name] = append(calls[name], fn.Sel.Name)
						}
					}
					return true
				})
			}
		}
		// reach: function → the keys it reaches, to a fixed point.
		reach := map[string]map[string]bool{}
		for fn, ks := range direct {
			reach[fn] = map[string]bool{}
			for _, k := range ks {
				reach[fn][k] = true
			}
		}
		for changed := true; changed; {
			changed = false
			for fn, callees := range calls {
				for _, c := range callees {
					if !funcs[c] || c == fn {
						continue
					}
					for k := range reach[c] {
						if reach[fn] == nil {
							reach[fn] = map[string]bool{}
						}
						if !reach[fn][k] {
							reach[fn][k], changed = true, true
						}
					}
				}
			}
		}
		byKey := map[string][]string{}
		for fn, ks := range reach {
			for k := range ks {
				if _, ok := byKey[k]; !ok {
					byKey[k] = nil
				}
				if ast.IsExported(fn) {
					byKey[k] = append(byKey[k], fn)
					if exported[p.path] == nil {
						exported[p.path] = map[string][]string{}
					}
					exported[p.path][fn] = append(exported[p.path][fn], k)
				}
			}
		}
		for k, acc := range byKey {
			sort.Strings(acc)
			keys = append(keys, contextKey{pkg: p.path, name: k, accessors: slices.Compact(acc)})
		}
	}

	// Who calls the accessors from another package: a selector pkg.F
	// where pkg is the accessor's package as the file imports it.
	users := map[string]map[string]bool{} // pkg.key → packages
	for _, p := range pkgs {
		for _, f := range p.files {
			alias := map[string]string{} // local name → import path
			for _, imp := range f.Imports {
				ip, _ := strconv.Unquote(imp.Path.Value)
				if exported[ip] == nil {
					continue
				}
				name := path.Base(ip)
				if imp.Name != nil {
					name = imp.Name.Name
				}
				alias[name] = ip
			}
			ast.Inspect(f, func(n ast.Node) bool {
				sel, ok := n.(*ast.SelectorExpr)
				if !ok {
					return true
				}
				x, ok := sel.X.(*ast.Ident)
				if !ok || alias[x.Name] == "" || alias[x.Name] == p.path {
					return true
				}
				ip := alias[x.Name]
				for _, k := range exported[ip][sel.Sel.Name] {
					id := ip + "." + k
					if users[id] == nil {
						users[id] = map[string]bool{}
					}
					users[id][p.path] = true
				}
				return true
			})
		}
	}
	for i := range keys {
		for u := range users[keys[i].pkg+"."+keys[i].name] {
			keys[i].users = append(keys[i].users, u)
		}
		sort.Strings(keys[i].users)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].pkg+"."+keys[i].name < keys[j].pkg+"."+keys[j].name })
	return keys, nil
}

// crossingKeys returns, for every key of keys another package reaches but
// the allowed one, what reaches it.
func crossingKeys(keys []contextKey, allowed string) []string {
	var out []string
	for _, k := range keys {
		if len(k.users) > 0 && k.pkg+"."+k.name != allowed {
			out = append(out, fmt.Sprintf("%s.%s (through %s) is reached from %s",
				k.pkg, k.name, strings.Join(k.accessors, ", "), strings.Join(k.users, ", ")))
		}
	}
	return out
}

// TestNoContextKeyCrossesPackages (issue 40): nothing about a request
// travels between the host's packages as a hidden context key. Each
// context key is set and read inside its own package; the one exception
// is the request's record of its caller (package caller), the typed
// record the edge attaches once.
func TestNoContextKeyCrossesPackages(t *testing.T) {
	keys, err := scanContextKeys(filepath.Join("..", "host"), modulePath+"/host")
	require.NoError(t, err)
	var record *contextKey
	for i := range keys {
		if keys[i].pkg+"."+keys[i].name == recordKey {
			record = &keys[i]
		}
	}
	require.NotNil(t, record, "the caller record's key is found")
	assert.NotEmpty(t, record.users, "the record is reached from the edge and the endpoint")
	assert.Empty(t, crossingKeys(keys, recordKey), "context keys reached from another package")

	// The MCP endpoint's core reads the record at one place, when it
	// makes an exchange (Exchange.Caller): every later step reads the
	// exchange.
	files, err := filepath.Glob(filepath.Join("..", "host", "internal", "mcp", "*.go"))
	require.NoError(t, err)
	var reads []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "caller" && slices.Contains(record.accessors, sel.Sel.Name) {
					reads = append(reads, fset.Position(sel.Pos()).String())
				}
			}
			return true
		})
	}
	assert.Len(t, reads, 1, "the MCP endpoint reads the caller's record once: %v", reads)
}

// TestContextKeyScanFindsCrossings shows the scan can fail: a key set by
// one package's function and read by another package, through a helper.
func TestContextKeyScanFindsCrossings(t *testing.T) {
	root := t.TempDir()
	write := func(name, src string) {
		require.NoError(t, os.MkdirAll(filepath.Join(root, filepath.Dir(name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(root, name), []byte(src), 0o644))
	}
	write("a/a.go", `package a
import "context"
type key struct{}
type own struct{}
func With(ctx context.Context, v string) context.Context { return with(ctx, v) }
func with(ctx context.Context, v string) context.Context { return context.WithValue(ctx, key{}, v) }
func From(ctx context.Context) string { s, _ := ctx.Value(key{}).(string); return s }
func inside(ctx context.Context) any { return context.WithValue(ctx, own{}, 1).Value(own{}) }
`)
	write("b/b.go", `package b
import (
	"context"
	alias "example.com/m/a"
)
func Read(ctx context.Context) string { return alias.From(ctx) }
`)
	keys, err := scanContextKeys(root, "example.com/m")
	require.NoError(t, err)
	assert.Equal(t, []string{"example.com/m/a.key (through From, With) is reached from example.com/m/b"}, crossingKeys(keys, ""))
	assert.Empty(t, crossingKeys(keys, "example.com/m/a.key"), "the allowed key")
}
