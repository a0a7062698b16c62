package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listedPackage is the part of `go list -json` output the rules need.
type listedPackage struct {
	ImportPath string
	Standard   bool
	Module     *struct{ Path string }
	Imports    []string
	Deps       []string
}

// listPackages runs `go list -deps -json ./...` at the repository root and
// returns the packages of this module by import path.
func listPackages(t *testing.T) map[string]*listedPackage {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-json", "./...")
	cmd.Dir = ".."
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "go list: %s", stderr.String())
	pkgs := map[string]*listedPackage{}
	dec := json.NewDecoder(&stdout)
	for {
		var p listedPackage
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if p.Module != nil && p.Module.Path == modulePath {
			pkgs[p.ImportPath] = &p
		}
	}
	require.NotEmpty(t, pkgs)
	return pkgs
}

// ours reports whether an import path is a package of this module.
func ours(path string) bool { return path == modulePath || strings.HasPrefix(path, modulePath+"/") }

// thirdParty reports whether an import path is outside this module and the
// standard library (its first element has a dot).
func thirdParty(path string) bool {
	return !ours(path) && strings.Contains(strings.SplitN(path, "/", 2)[0], ".")
}

// under reports whether path is the package dir of this module or below it.
func under(path, dir string) bool {
	p := modulePath + "/" + dir
	return path == p || strings.HasPrefix(path, p+"/")
}

// TestDependencyDirection checks the package rules of the design:
// internal/jsonx (the shared JSON rules) and metadata import only the
// standard library and, for metadata, internal/jsonx and internal/tablehook
// (a leaf of no imports through which the module's own tests add a method
// to the table); binding only metadata (and jsonschema/v6); worker not host (nor azcore, but for
// worker/obo, the on-behalf-of helper); nothing but cmd/, serve,
// funcmcptest, the sample (which serves itself) and tests/ imports host;
// the sample imports the worker and serve only; an app that does not
// import serve (examples/hello) links no host.
func TestDependencyDirection(t *testing.T) {
	pkgs := listPackages(t)
	for _, want := range []string{"metadata", "binding", "worker", "host", "cmd/funchost", "function-app-sample"} {
		require.Contains(t, pkgs, modulePath+"/"+want, "go list sees %s", want)
	}

	// allowed says which packages of ours a package (and its internal
	// packages) may depend on, directly or not.
	rules := []struct {
		dir     string
		allowed func(dep string) bool
		thirdOK func(dep string) bool // nil: any third-party module
		except  string                // a package under dir the rule skips
	}{
		{dir: "internal/jsonx", allowed: func(dep string) bool { return under(dep, "internal/jsonx") },
			thirdOK: func(string) bool { return false }},
		// parallel is a leaf of the standard library's; so is startgc,
		// whose init must run before the inits of the packages that
		// allocate at start (Go initialises a package once its imports
		// are, the first by import path among those ready).
		{dir: "internal/parallel", allowed: func(dep string) bool { return under(dep, "internal/parallel") },
			thirdOK: func(string) bool { return false }},
		{dir: "internal/startgc", allowed: func(dep string) bool { return under(dep, "internal/startgc") },
			thirdOK: func(string) bool { return false }},
		{dir: "metadata", allowed: func(dep string) bool {
			return under(dep, "metadata") || under(dep, "internal/jsonx") || under(dep, "internal/tablehook") || under(dep, "internal/parallel")
		},
			thirdOK: func(string) bool { return false }},
		{dir: "binding", allowed: func(dep string) bool {
			return under(dep, "binding") || under(dep, "metadata") || under(dep, "internal/jsonx") || under(dep, "internal/tablehook") ||
				under(dep, "internal/parallel")
		},
			thirdOK: func(dep string) bool {
				return strings.HasPrefix(dep, "github.com/santhosh-tekuri/jsonschema/v6") || strings.HasPrefix(dep, "golang.org/x/text/")
			}},
		{dir: "worker", allowed: func(dep string) bool { return !under(dep, "host") && !under(dep, "cmd") && !under(dep, "tests") },
			thirdOK: func(dep string) bool { return !strings.HasPrefix(dep, "github.com/Azure/") }, except: "worker/obo"},
		// The on-behalf-of helper links azidentity, for the apps that
		// import it only.
		{dir: "worker/obo", allowed: func(dep string) bool { return !under(dep, "host") && !under(dep, "cmd") && !under(dep, "tests") }},
		// The sample serves itself too ("handler serve"): through serve, it
		// links the host.
		{dir: "function-app-sample", allowed: func(dep string) bool { return !under(dep, "cmd") && !under(dep, "tests") }},
		// An app that does not opt into serving itself links none of the
		// host: the smallest example imports the worker only.
		{dir: "examples/hello", allowed: func(dep string) bool {
			return !under(dep, "host") && !under(dep, "serve") && !under(dep, "cmd") && !under(dep, "tests")
		}},
		{dir: "serve", allowed: func(dep string) bool { return !under(dep, "cmd") && !under(dep, "tests") && !under(dep, "funcmcptest") }},
		{dir: "funcmcptest", allowed: func(dep string) bool { return !under(dep, "cmd") && !under(dep, "tests") }},
	}
	for _, r := range rules {
		t.Run(r.dir, func(t *testing.T) {
			var checked int
			for path, p := range pkgs {
				if !under(path, r.dir) || (r.except != "" && under(path, r.except)) {
					continue
				}
				checked++
				for _, dep := range p.Deps {
					switch {
					case ours(dep) && !r.allowed(dep):
						t.Errorf("%s depends on %s", path, dep)
					case thirdParty(dep) && r.thirdOK != nil && !r.thirdOK(dep):
						t.Errorf("%s depends on the third-party package %s", path, dep)
					}
				}
			}
			assert.NotZero(t, checked)
		})
	}

	t.Run("only cmd, serve, funcmcptest, the sample and tests import host", func(t *testing.T) {
		for path, p := range pkgs {
			if under(path, "host") || under(path, "cmd") || under(path, "tests") || under(path, "serve") || under(path, "funcmcptest") ||
				under(path, "function-app-sample") {
				continue
			}
			for _, dep := range p.Deps {
				if under(dep, "host") {
					t.Errorf("%s depends on %s", path, dep)
				}
			}
		}
	})

	// The OpenTelemetry SDK and its exporters double a worker binary's
	// size: only an app that opts in with worker/otel links them (as the
	// walkthrough's app does, like the sample).
	t.Run("only worker/otel links the OpenTelemetry SDK", func(t *testing.T) {
		var checked int
		for path, p := range pkgs {
			if !(under(path, "worker") || under(path, "examples")) || under(path, "worker/otel") || under(path, "examples/walkthrough") {
				continue
			}
			checked++
			for _, dep := range p.Deps {
				if strings.HasPrefix(dep, "go.opentelemetry.io/") || strings.HasPrefix(dep, "google.golang.org/grpc") {
					t.Errorf("%s depends on %s", path, dep)
				}
			}
		}
		assert.NotZero(t, checked)
	})

	t.Run("the sample imports only the worker of ours", func(t *testing.T) {
		p := pkgs[modulePath+"/function-app-sample"]
		var mine []string
		for _, imp := range p.Imports {
			if ours(imp) && !under(imp, "function-app-sample") {
				mine = append(mine, imp)
			}
		}
		slices.Sort(mine)
		assert.Equal(t, []string{modulePath + "/serve", modulePath + "/worker", modulePath + "/worker/otel"}, mine)
	})

	// Serving in one process is opt-in: the worker links no host, so a
	// custom handler that does not import serve stays as small as before.
	t.Run("the worker links no host and no serve", func(t *testing.T) {
		for path, p := range pkgs {
			if !under(path, "worker") {
				continue
			}
			for _, dep := range p.Deps {
				if under(dep, "host") || under(dep, "serve") || under(dep, "funcmcptest") {
					t.Errorf("%s depends on %s", path, dep)
				}
			}
		}
	})
}

// hostInternalImports lists, for every package under host/internal, the
// other host/internal packages it may import directly. The packages form
// layers that read top-down (see host/doc.go): a package imports only
// packages of lower layers, so an upward import (mcp importing catalog,
// catalog importing invoke, …) fails TestHostInternalLayers. A new package
// under host/internal must be added here with what it may import.
var hostInternalImports = map[string][]string{
	"instances": {"telemetry", "mcp", "auth", "backplane", "config", "dedup", "ids", "notify", "tasks"},
	"launch":    {"status", "telemetry", "invoke", "supervise", "auth", "config"},
	"status":    {"telemetry", "catalog"},
	"telemetry": {"mcp", "invoke"},
	"ratelimit": {"mcp", "owner"},
	"invoke":    {"peer", "auth", "ids"},
	"mcp":       {"peer", "auth", "jsonrpc", "dedup", "ids", "tasks", "owner", "notify", "caller"},
	"supervise": {"config", "backoff", "ids", "reaper"},
	"catalog":   {"jsonrpc"},
	"announce":  {"backplane", "notify"},
	"guard":     {"jsonrpc", "owner"},
	"backplane": {"backoff", "dedup"},
	"tasks":     {"jsonrpc", "ids", "owner"},
	"auth":      {"config", "owner", "caller"},
	"oauth":     {"owner", "caller"},
	"config":    nil,
	"jsonrpc":   nil,
	"ids":       nil,
	"backoff":   nil,
	"dedup":     nil,
	"owner":     nil,
	"caller":    {"owner"},
	"peer":      nil,
	"notify":    {"owner"},
	"reaper":    nil, // the standard library only: its init starts the reaper mode
}

// hostImportViolations checks the direct imports of the packages of ours
// (import path → imports) against allowed: no package under host/internal
// imports host, each imports only the host/internal packages allowed, and
// every host/internal package is listed.
func hostImportViolations(imports map[string][]string, allowed map[string][]string) []string {
	const internal = modulePath + "/host/internal/"
	var out []string
	for path, imps := range imports {
		name, ok := strings.CutPrefix(path, internal)
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(name, "/")
		may, listed := allowed[name]
		if !listed {
			out = append(out, fmt.Sprintf("%s is not listed in hostInternalImports", path))
			continue
		}
		for _, imp := range imps {
			switch dep, isInternal := strings.CutPrefix(imp, internal); {
			case imp == modulePath+"/host":
				out = append(out, fmt.Sprintf("%s imports %s", path, imp))
			case isInternal:
				dep, _, _ = strings.Cut(dep, "/")
				if dep != name && !slices.Contains(may, dep) {
					out = append(out, fmt.Sprintf("%s imports %s, which it may not", path, imp))
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestHostInternalLayers checks the imports between the packages of
// host/internal against hostInternalImports.
func TestHostInternalLayers(t *testing.T) {
	pkgs := listPackages(t)
	imports := map[string][]string{}
	top := map[string]bool{} // a sub-package counts as its package
	for path, p := range pkgs {
		if name, ok := strings.CutPrefix(path, modulePath+"/host/internal/"); ok {
			name, _, _ = strings.Cut(name, "/")
			top[name] = true
		}
		imports[path] = p.Imports
	}
	require.Len(t, hostInternalImports, len(top), "every package under host/internal is listed, and no more")
	for _, v := range hostImportViolations(imports, hostInternalImports) {
		t.Error(v)
	}
	// The rules are a DAG by construction: each package's allowed imports
	// are all listed, and none leads back to it.
	var visit func(name string, path []string)
	visit = func(name string, path []string) {
		if slices.Contains(path, name) {
			t.Errorf("hostInternalImports has a cycle: %s", strings.Join(append(path, name), " → "))
			return
		}
		for _, dep := range hostInternalImports[name] {
			_, ok := hostInternalImports[dep]
			assert.True(t, ok, "%s may import %s, which is not listed", name, dep)
			visit(dep, append(path, name))
		}
	}
	for name := range hostInternalImports {
		visit(name, nil)
	}
}

// mcpFrontImports lists, for every package of the MCP front (the core,
// host/internal/mcp, named "", and its sub-packages, named by their path
// under it), the other packages of the front it may import. The core may
// import its sub-packages; none imports the core (each meets it through an
// interface of its own), and the sub-packages import each other only as
// listed, so the front reads top-down like host/internal.
var mcpFrontImports = map[string][]string{
	"":          {"wire", "legacysse", "taskrun", "listen", "clientreq", "functions", "sessions"},
	"sessions":  {"clientreq", "wire"},
	"functions": {"clientreq", "wire"},
	"taskrun":   nil,
	"listen":    {"wire"},
	"clientreq": {"wire", "taskrun"},
	"legacysse": {"wire"},
	"wire":      nil,
	// wire/wiretest: the strict reference reading the decoders' tests
	// share; only tests import it.
	"wire/wiretest": nil,
}

// TestMCPFrontLayers checks the imports between the packages of the MCP
// front against mcpFrontImports.
func TestMCPFrontLayers(t *testing.T) {
	const front = modulePath + "/host/internal/mcp"
	name := func(path string) (string, bool) {
		if path == front {
			return "", true
		}
		return strings.CutPrefix(path, front+"/")
	}
	var checked int
	for path, p := range listPackages(t) {
		n, ok := name(path)
		if !ok {
			continue
		}
		checked++
		may, listed := mcpFrontImports[n]
		if !assert.True(t, listed, "%s is not listed in mcpFrontImports", path) {
			continue
		}
		for _, imp := range p.Imports {
			if dep, ok := name(imp); ok && !slices.Contains(may, dep) {
				t.Errorf("%s imports %s, which it may not", path, imp)
			}
		}
	}
	assert.Len(t, mcpFrontImports, checked, "every package of the front is listed, and no more")
}

// TestMCPFrontDiagram checks the drawing of the MCP front in
// docs/architecture.md against mcpFrontImports: every package drawn, with
// the imports drawn (the core's line, "mcp", draws none).
func TestMCPFrontDiagram(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "architecture.md"))
	require.NoError(t, err)
	_, block, found := strings.Cut(string(data), "<!-- mcp front -->\n```text\n")
	require.True(t, found, "docs/architecture.md has no drawing of the MCP front")
	block, _, found = strings.Cut(block, "```")
	require.True(t, found)
	drawn := map[string][]string{}
	for _, line := range strings.Split(block, "\n") {
		if name, imports, ok := strings.Cut(line, "─►"); ok {
			imports, _, _ = strings.Cut(strings.TrimSpace(imports), "  ")
			drawn[strings.TrimSpace(name)] = slices.Sorted(slices.Values(strings.Split(imports, ", ")))
			continue
		}
		left, _, _ := strings.Cut(line, "  ")
		switch left = strings.TrimSpace(left); {
		case left == "" || strings.ContainsAny(left, "│▼"):
		case left == "mcp":
			drawn[""] = nil
		default:
			drawn[left] = nil
		}
	}
	want := map[string][]string{}
	for name, imports := range mcpFrontImports {
		if name != "" && len(imports) > 0 {
			want[name] = slices.Sorted(slices.Values(imports))
		} else {
			want[name] = nil
		}
	}
	assert.Equal(t, want, drawn)
}

// TestHostImportCheckFindsViolations shows the check above can fail.
func TestHostImportCheckFindsViolations(t *testing.T) {
	in := func(name string) string { return modulePath + "/host/internal/" + name }
	imports := map[string][]string{
		in("mcp"):            {in("catalog"), in("jsonrpc"), "net/http"}, // upward
		in("catalog"):        {in("invoke")},                             // upward
		in("guard"):          {modulePath + "/host"},                     // back to host
		in("jsonrpc"):        {modulePath + "/metadata"},                 // fine
		in("invoke/inner"):   {in("peer"), in("invoke")},                 // a sub-package counts as its package
		in("newpkg"):         nil,                                        // not listed
		modulePath + "/host": {in("catalog"), in("invoke")},              // host may import anything
	}
	assert.Equal(t, []string{
		in("catalog") + " imports " + in("invoke") + ", which it may not",
		in("guard") + " imports " + modulePath + "/host",
		in("mcp") + " imports " + in("catalog") + ", which it may not",
		in("newpkg") + " is not listed in hostInternalImports",
	}, hostImportViolations(imports, hostInternalImports))
}

// TestHostDoesNotImportWorker: the host meets a worker only through
// function.json and the custom-handler protocol, so that any worker, in any
// language, is served the same way.
func TestHostDoesNotImportWorker(t *testing.T) {
	pkgs := listPackages(t)
	var checked int
	for path, p := range pkgs {
		if !under(path, "host") {
			continue
		}
		checked++
		for _, dep := range p.Deps {
			if under(dep, "worker") {
				t.Errorf("%s depends on %s", path, dep)
			}
		}
	}
	assert.NotZero(t, checked)
}

// goModRequires reads the requirements of the go.mod in dir.
func goModRequires(t *testing.T, dir string) map[string]string {
	t.Helper()
	cmd := exec.Command("go", "mod", "edit", "-json")
	cmd.Dir = dir
	out, err := cmd.Output()
	require.NoError(t, err, "go mod edit -json in %s", dir)
	var mod struct {
		Require []struct{ Path, Version string }
	}
	require.NoError(t, json.Unmarshal(out, &mod))
	req := map[string]string{}
	for _, r := range mod.Require {
		req[r.Path] = r.Version
	}
	return req
}

// TestBenchPeerStaysOutOfTheModule: the benchmarks' second Go peer,
// mark3labs/mcp-go, is required by tests/bench/mcpgoserver, a module of its
// own at the version the benchmarks name, and never by funcmcp's go.mod,
// so that no package of funcmcp can link it.
func TestBenchPeerStaysOutOfTheModule(t *testing.T) {
	const peer = "github.com/mark3labs/mcp-go"
	assert.NotContains(t, goModRequires(t, ".."), peer)
	assert.Equal(t, "v1.2.1", goModRequires(t, filepath.Join("bench", "mcpgoserver"))[peer])
	for path, p := range listPackages(t) {
		for _, dep := range p.Deps {
			assert.False(t, strings.HasPrefix(dep, peer), "%s depends on %s", path, dep)
		}
	}
}

// foreignPackages are the modules whose types must not appear in a public
// signature of ours: they are implementation choices, not API.
var foreignPackages = []string{"github.com/go-chi/", "github.com/Azure/azure-sdk-for-go/"}

// TestNoForeignTypesInPublicSignatures: no exported function, method,
// type, field, variable or constant of a non-internal package of ours
// mentions a chi or azcore type. worker/obo is the one exception: its whole
// API is an Azure SDK credential (azcore.TokenCredential, made with
// azidentity's options), the type every Azure SDK client takes.
func TestNoForeignTypesInPublicSignatures(t *testing.T) {
	var checked int
	for path := range listPackages(t) {
		rel := strings.TrimPrefix(strings.TrimPrefix(path, modulePath), "/")
		if strings.Contains(path, "/internal") || under(path, "tests") || under(path, "cmd") || rel == "function-app-sample" || rel == "worker/obo" {
			continue
		}
		files, err := filepath.Glob(filepath.Join("..", rel, "*.go"))
		require.NoError(t, err)
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			src, err := os.ReadFile(file)
			require.NoError(t, err)
			checked++
			for _, use := range foreignTypesInAPI(t, file, src) {
				t.Errorf("%s: %s", file, use)
			}
		}
	}
	assert.NotZero(t, checked)
}

// TestForeignTypeCheckFindsViolations shows the check above can fail.
func TestForeignTypeCheckFindsViolations(t *testing.T) {
	const src = `package p
import (
	"net/http"
	"github.com/go-chi/chi/v5"
	az "github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
)
type Server struct {
	Router chi.Router
	hidden chi.Router
	H      http.Handler
}
type Options = az.ClientOptions
func New(r chi.Router) *Server { return nil }
func (s *Server) Policies() []az.Policy { return nil }
func (s *Server) fine(r chi.Router) {}
type unexported struct{ R chi.Router }
func (u unexported) Exported(r chi.Router) {}
var Default chi.Router
type Mux interface{ Route() chi.Router }
`
	got := foreignTypesInAPI(t, "p.go", []byte(src))
	assert.ElementsMatch(t, []string{
		"field Server.Router: chi.Router",
		"type Options: az.ClientOptions",
		"func New: chi.Router",
		"func Server.Policies: az.Policy",
		"var Default: chi.Router",
		"type Mux: chi.Router",
	}, got)
}

// foreignTypesInAPI lists the uses of foreign types in the exported API
// declared in one Go file.
func foreignTypesInAPI(t *testing.T, file string, src []byte) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, src, parser.SkipObjectResolution)
	require.NoError(t, err)
	foreign := map[string]bool{} // local names of foreign imports
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		if !slices.ContainsFunc(foreignPackages, func(prefix string) bool { return strings.HasPrefix(p, prefix) }) {
			continue
		}
		name := path.Base(p)
		if regexp.MustCompile(`^v[0-9]+$`).MatchString(name) {
			name = path.Base(path.Dir(p))
		}
		if imp.Name != nil {
			name = imp.Name.Name
		}
		foreign[name] = true
	}
	if len(foreign) == 0 {
		return nil
	}
	var out []string
	report := func(what string, n ast.Node) {
		ast.Inspect(n, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && foreign[x.Name] {
				out = append(out, fmt.Sprintf("%s: %s.%s", what, x.Name, sel.Sel.Name))
			}
			return false
		})
	}
	exportedType := map[string]bool{}
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
			for _, s := range g.Specs {
				exportedType[s.(*ast.TypeSpec).Name.Name] = s.(*ast.TypeSpec).Name.IsExported()
			}
		}
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() {
				continue
			}
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) == 1 {
				recv := d.Recv.List[0].Type
				if star, ok := recv.(*ast.StarExpr); ok {
					recv = star.X
				}
				id, ok := recv.(*ast.Ident)
				if !ok || !exportedType[id.Name] {
					continue
				}
				name = id.Name + "." + name
			}
			report("func "+name, d.Type)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					if !s.Name.IsExported() {
						continue
					}
					if st, ok := s.Type.(*ast.StructType); ok {
						for _, field := range st.Fields.List {
							for _, n := range field.Names {
								if n.IsExported() {
									report("field "+s.Name.Name+"."+n.Name, field.Type)
								}
							}
							if len(field.Names) == 0 { // embedded: promoted into the API
								report("field "+s.Name.Name, field.Type)
							}
						}
						continue
					}
					report("type "+s.Name.Name, s.Type)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && s.Type != nil {
							report(strings.ToLower(d.Tok.String())+" "+n.Name, s.Type)
						}
					}
				}
			}
		}
	}
	return out
}

// TestArchitectureDiagram: the drawing of host's layers in
// docs/architecture.md (the text block after "<!-- host layers -->") names
// every host/internal package with exactly the imports hostInternalImports
// allows, so the page cannot drift from the code.
func TestArchitectureDiagram(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "docs", "architecture.md"))
	require.NoError(t, err)
	_, block, found := strings.Cut(string(data), "<!-- host layers -->\n```text\n")
	require.True(t, found, "docs/architecture.md has no host layers drawing")
	block, _, found = strings.Cut(block, "```")
	require.True(t, found)
	drawn := map[string][]string{}
	for _, line := range strings.Split(block, "\n") {
		left, _, _ := strings.Cut(line, "  ") // the job follows two spaces or more
		if name, imports, ok := strings.Cut(line, "─►"); ok {
			imports, _, _ = strings.Cut(strings.TrimSpace(imports), "  ")
			drawn[strings.TrimSpace(name)] = strings.Split(imports, ", ")
			continue
		}
		if left == "host" || strings.TrimSpace(left) == "" || strings.ContainsAny(left, "│▼") {
			continue
		}
		for _, name := range strings.Split(left, ", ") {
			drawn[name] = nil
		}
	}
	want := map[string][]string{}
	for name, imports := range hostInternalImports {
		want[name] = slices.Sorted(slices.Values(imports))
	}
	for name, imports := range drawn {
		drawn[name] = slices.Sorted(slices.Values(imports))
	}
	assert.Equal(t, want, drawn)
}
