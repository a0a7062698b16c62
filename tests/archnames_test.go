package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// goSymbols is what the module's packages declare, by package name (two
// packages of one name share an entry): top-level names, and the methods
// and fields of each type.
type goSymbols map[string]*pkgSymbols

type pkgSymbols struct {
	top     map[string]bool
	members map[string]map[string]bool // type → its methods and fields
	aliases map[string][2]string       // type → the package and type it aliases
}

func (s goSymbols) pkg(name string) *pkgSymbols {
	p := s[name]
	if p == nil {
		p = &pkgSymbols{top: map[string]bool{}, members: map[string]map[string]bool{}, aliases: map[string][2]string{}}
		s[name] = p
	}
	return p
}

func (p *pkgSymbols) member(typ, name string) {
	m := p.members[typ]
	if m == nil {
		m = map[string]bool{}
		p.members[typ] = m
	}
	m[name] = true
}

// moduleSymbols parses every non-test Go file of the module (tests/node
// and testdata left out).
func moduleSymbols(t *testing.T, root string) goSymbols {
	t.Helper()
	syms := goSymbols{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "node_modules", "testdata", ".git", "dist":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ps := syms.pkg(f.Name.Name)
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil && len(d.Recv.List) == 1 {
					ps.member(receiverName(d.Recv.List[0].Type), d.Name.Name)
				} else {
					ps.top[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						ps.top[s.Name.Name] = true
						if sel, ok := s.Type.(*ast.SelectorExpr); ok && s.Assign.IsValid() {
							if pkg, ok := sel.X.(*ast.Ident); ok {
								ps.aliases[s.Name.Name] = [2]string{pkg.Name, sel.Sel.Name}
							}
						}
						var fields *ast.FieldList
						switch tt := s.Type.(type) {
						case *ast.StructType:
							fields = tt.Fields
						case *ast.InterfaceType:
							fields = tt.Methods
						}
						if fields == nil {
							continue
						}
						for _, f := range fields.List {
							for _, n := range f.Names {
								ps.member(s.Name.Name, n.Name)
							}
							if len(f.Names) == 0 { // embedded: its name is a member
								if n := receiverName(f.Type); n != "" {
									ps.member(s.Name.Name, n)
								} else if sel, ok := f.Type.(*ast.StarExpr); ok {
									if se, ok := sel.X.(*ast.SelectorExpr); ok {
										ps.member(s.Name.Name, se.Sel.Name)
									}
								} else if se, ok := f.Type.(*ast.SelectorExpr); ok {
									ps.member(s.Name.Name, se.Sel.Name)
								}
							}
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							ps.top[n.Name] = true
						}
					}
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	return syms
}

// has reports whether a dotted name (pkg.Name, pkg.Type.Member or
// Type.Member) is declared; known is false when its first part is
// neither a package nor a type of the module.
func (s goSymbols) has(name string) (found, known bool) {
	parts := strings.Split(name, ".")
	if p := s[parts[0]]; p != nil && len(parts) <= 3 {
		if !p.top[parts[1]] {
			return false, true
		}
		if len(parts) == 2 {
			return true, true
		}
		return s.promoted(p, parts[1], parts[2], 3), true
	}
	if len(parts) != 2 {
		return false, false
	}
	for _, p := range s {
		if _, ok := p.members[parts[0]]; ok && p.top[parts[0]] {
			known = true
			if s.promoted(p, parts[0], parts[1], 3) {
				return true, true
			}
		}
	}
	return false, known
}

// promoted reports whether type typ of p has member name, its own or one
// of a type it embeds (of any package), depth levels deep.
func (s goSymbols) promoted(p *pkgSymbols, typ, name string, depth int) bool {
	if a, ok := p.aliases[typ]; ok && s[a[0]] != nil && depth > 0 {
		return s.promoted(s[a[0]], a[1], name, depth-1)
	}
	m := p.members[typ]
	if m[name] {
		return true
	}
	if depth == 0 {
		return false
	}
	for embedded := range m {
		for _, q := range s {
			if q.top[embedded] && q.members[embedded] != nil && s.promoted(q, embedded, name, depth-1) {
				return true
			}
		}
	}
	return false
}

// TestArchitectureNamesAreInTheCode: every function, type, method and
// field docs/architecture.md names as package.Name, package.Type.member or
// Type.member (in backquotes) is declared in the module, so the request
// walks name the code as it is.
func TestArchitectureNamesAreInTheCode(t *testing.T) {
	root := repoRoot(t)
	syms := moduleSymbols(t, root)
	doc, err := os.ReadFile(filepath.Join(root, "docs", "architecture.md"))
	require.NoError(t, err)
	quoted := regexp.MustCompile("`([A-Za-z_][A-Za-z0-9_]*(?:\\.[A-Za-z_][A-Za-z0-9_]*){1,2})`")
	var missing []string
	checked := 0
	for _, name := range docNames(string(doc), quoted) {
		if strings.HasSuffix(name, ".go") || strings.HasSuffix(name, ".md") {
			continue // a file
		}
		found, known := syms.has(name)
		if !known {
			continue // a file name, a setting, an OpenTelemetry name
		}
		checked++
		if !found {
			missing = append(missing, name)
		}
	}
	assert.Greater(t, checked, 100, "the walks name the code")
	assert.Empty(t, missing, "names in docs/architecture.md that the code does not declare")
}

// docNames returns the quoted names of doc, leaving out the cells of a
// table's "before" column (what the code no longer has, on purpose).
func docNames(doc string, quoted *regexp.Regexp) []string {
	var names []string
	skip := -1
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "|") {
			skip = -1
			names = append(names, quotedNames(line, quoted)...)
			continue
		}
		cells := strings.Split(line, "|")
		for i, c := range cells {
			if strings.TrimSpace(c) == "before" {
				skip = i
			}
		}
		for i, c := range cells {
			if i != skip {
				names = append(names, quotedNames(c, quoted)...)
			}
		}
	}
	return names
}

func quotedNames(s string, quoted *regexp.Regexp) []string {
	var out []string
	for _, m := range quoted.FindAllStringSubmatch(s, -1) {
		out = append(out, m[1])
	}
	return out
}
