package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"go/format"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// goTimeout bounds every go command the tests run.
const goTimeout = 5 * time.Minute

// repoRoot is the funcmcp checkout these tests run in.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	return root
}

func TestNewRefuses(t *testing.T) {
	notEmpty := t.TempDir()
	writeFile(t, notEmpty, "notes.txt", "mine")
	file := filepath.Join(t.TempDir(), "plain-file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	other := t.TempDir()
	writeFile(t, other, "go.mod", "module example.com/other\n")
	fresh := filepath.Join(t.TempDir(), "fresh")

	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStderr string
	}{
		{"no DIR", []string{"new"}, 2, "funchost new: need exactly one DIR, got 0"},
		{"two DIRs", []string{"new", "a", "b"}, 2, `need exactly one DIR, got 2: ["a" "b"]`},
		{"help", []string{"new", "--help"}, 0, "funchost new [flags] DIR"},
		{"unknown flag", []string{"new", "--nope", fresh}, 2, "flag provided but not defined: -nope"},
		{"not empty", []string{"new", notEmpty}, 1,
			"funchost new: " + notEmpty + " is not empty (it holds notes.txt): choose a new or empty folder, or pass --force"},
		{"not a folder", []string{"new", "--force", file}, 1, "funchost new: " + file + " exists and is not a folder"},
		{"bad module", []string{"new", "--module", "my app", fresh}, 1, `funchost new: module path "my app" is not valid: ' ' is not allowed`},
		{"module after DIR", []string{"new", fresh, "--module", "a//b"}, 1, `module path "a//b" is not valid: an element is empty`},
		{"funcmcp's own module", []string{"new", "--module", "github.com/funcmcp/funcmcp/x", fresh}, 1, "it is funcmcp's own"},
		{"funcmcp not a checkout", []string{"new", "--funcmcp", other, fresh}, 1,
			`funchost new: finding the funcmcp module: --funcmcp ` + other + `: its go.mod is module "example.com/other", not github.com/funcmcp/funcmcp`},
		{"funcmcp missing", []string{"new", "--funcmcp", filepath.Join(other, "none"), fresh}, 1, "no such file or directory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, &stdout, &stderr)
			assert.Equal(t, tc.wantCode, code, "stderr: %s", stderr.String())
			assert.Contains(t, stderr.String(), tc.wantStderr)
			assert.NotContains(t, stdout.String(), "Writing")
			// Nothing was written.
			assert.NoFileExists(t, filepath.Join(notEmpty, "go.mod"))
			assert.NoDirExists(t, fresh)
		})
	}
	data, err := os.ReadFile(filepath.Join(notEmpty, "notes.txt"))
	require.NoError(t, err)
	assert.Equal(t, "mine", string(data))
}

func TestNotEmptyErrorListsAFew(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		writeFile(t, dir, name, "")
	}
	err := checkTarget("app", dir, false)
	var ne *NotEmptyError
	require.ErrorAs(t, err, &ne)
	assert.Equal(t, "app", ne.Dir)
	assert.Equal(t, []string{"a", "b", "c", "and 2 more"}, ne.Entries)
	assert.NoError(t, checkTarget("app", dir, true), "--force")
	assert.NoError(t, checkTarget("app", filepath.Join(dir, "new"), false), "a folder to create")
	assert.NoError(t, checkTarget("app", t.TempDir(), false), "an empty folder")
}

func TestModuleFromDir(t *testing.T) {
	tests := map[string]string{
		"myapp":        "myapp",
		"My App":       "my-app",
		"hello_world":  "hello_world",
		"tools.v2":     "tools.v2",
		".hidden":      "hidden",
		"a  +  b":      "a-b",
		"-x-":          "x",
		"café-tools":   "caf-tools",
		"日本":           "app",
		"___":          "app",
		"weather~mcp!": "weather~mcp",
	}
	for dir, want := range tests {
		t.Run(dir, func(t *testing.T) {
			got := moduleFromDir(filepath.Join("/somewhere", dir))
			assert.Equal(t, want, got)
			assert.NoError(t, checkModulePath(got))
		})
	}
}

func TestCheckModulePath(t *testing.T) {
	tests := []struct {
		module  string
		wantErr string
	}{
		{"myapp", ""},
		{"example.com/team/weather-tools", ""},
		{"github.com/Someone/Tools_v2", ""},
		{"", "it is empty"},
		{"a/", "an element is empty"},
		{"/a", "an element is empty"},
		{".a", `element ".a" starts or ends with a dot`},
		{"a/b.", `element "b." starts or ends with a dot`},
		{"a b", `' ' is not allowed`},
		{`a\b`, `'\\' is not allowed`},
		{"café", `'é' is not allowed`},
		{"github.com/funcmcp/funcmcp", "it is funcmcp's own"},
	}
	for _, tc := range tests {
		t.Run(tc.module, func(t *testing.T) {
			err := checkModulePath(tc.module)
			if tc.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestAppName(t *testing.T) {
	tests := map[string]string{
		"myapp":                    "myapp",
		"example.com/team/tools":   "tools",
		"example.com/tools/v2":     "tools",
		"v2":                       "v2",
		"example.com/tools/v2beta": "v2beta",
	}
	for module, want := range tests {
		assert.Equal(t, want, appName(module), module)
	}
}

func TestFindSource(t *testing.T) {
	tree := t.TempDir()
	checkout := filepath.Join(tree, "src", "funcmcp")
	writeFile(t, checkout, "go.mod", "module github.com/funcmcp/funcmcp // the library\n\ngo 1.27.1\n")
	writeFile(t, checkout, "go.sum", "sums\n")
	writeFile(t, checkout, "cmd/funchost/main.go", "package main\n")
	quoted := filepath.Join(tree, "quoted")
	writeFile(t, quoted, "go.mod", "module \"github.com/funcmcp/funcmcp\"\n")
	cached := filepath.Join(tree, "mod", "github.com", "funcmcp", "funcmcp@v1.2.3")
	writeFile(t, cached, "go.mod", "module github.com/funcmcp/funcmcp\n\ngo 1.26.2\n")
	writeFile(t, cached, "go.sum", "cached sums\n")
	writeFile(t, cached, "cmd/funchost/main.go", "package main\n")
	other := filepath.Join(tree, "other")
	writeFile(t, other, "go.mod", "module example.com/other\n")
	writeFile(t, other, "funcmcp/go.txt", "not a module\n")
	nested := filepath.Join(checkout, "examples", "own") // a module of its own inside the checkout
	writeFile(t, nested, "go.mod", "module example.com/own\n")

	tests := []struct {
		name       string
		flag       string
		candidates []string
		version    string
		want       source
		wantErr    string
	}{
		{name: "--funcmcp", flag: checkout, version: "v9.9.9",
			want: source{Replace: checkout, Version: replacedVersion, GoSum: filepath.Join(checkout, "go.sum"), GoVersion: "1.27.1"}},
		{name: "--funcmcp wins over candidates", flag: checkout, candidates: []string{filepath.Join(cached, "cmd", "funchost")},
			want: source{Replace: checkout, Version: replacedVersion, GoSum: filepath.Join(checkout, "go.sum"), GoVersion: "1.27.1"}},
		{name: "--funcmcp of another module", flag: other, wantErr: `its go.mod is module "example.com/other"`},
		{name: "--funcmcp below the root", flag: filepath.Join(checkout, "cmd"), wantErr: "go.mod: no such file or directory"},
		{name: "quoted module line, no go line, no go.sum", flag: quoted,
			want: source{Replace: quoted, Version: replacedVersion, GoVersion: defaultGoVersion}},
		{name: "funchost's source in a checkout", candidates: []string{filepath.Join(checkout, "cmd", "funchost"), other},
			want: source{Replace: checkout, Version: replacedVersion, GoSum: filepath.Join(checkout, "go.sum"), GoVersion: "1.27.1"}},
		{name: "working directory in a checkout", candidates: []string{filepath.Join(other, "funcmcp"), checkout},
			want: source{Replace: checkout, Version: replacedVersion, GoSum: filepath.Join(checkout, "go.sum"), GoVersion: "1.27.1"}},
		{name: "a module of its own inside a checkout", candidates: []string{nested}, wantErr: "not run from a funcmcp checkout"},
		{name: "module cache copy at the version built", candidates: []string{filepath.Join(cached, "cmd", "funchost")}, version: "v1.2.3",
			want: source{Version: "v1.2.3", GoSum: filepath.Join(cached, "go.sum"), GoVersion: "1.26.2"}},
		{name: "module cache copy at another version", candidates: []string{filepath.Join(cached, "cmd", "funchost")}, version: "v1.2.4",
			want: source{Version: "v1.2.4", GoVersion: defaultGoVersion}},
		{name: "installed, no checkout", candidates: []string{other}, version: "v0.3.0",
			want: source{Version: "v0.3.0", GoVersion: defaultGoVersion}},
		{name: "devel build, no checkout", candidates: []string{other}, version: "(devel)",
			wantErr: `finding the funcmcp module: funchost was not run from a funcmcp checkout, and it was built without a module version ("(devel)"): pass --funcmcp DIR`},
		{name: "modified sources", version: "v0.0.0-20260101000000-0123456789ab+dirty", wantErr: "pass --funcmcp DIR"},
		{name: "no build information", version: "", wantErr: "pass --funcmcp DIR"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := findSource(tc.flag, tc.candidates, tc.version)
			if tc.wantErr != "" {
				assert.ErrorContains(t, err, tc.wantErr)
				var se *SourceError
				assert.ErrorAs(t, err, &se)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// TestDefaultGoVersion keeps the go line written without a funcmcp go.mod
// at hand equal to funcmcp's own.
func TestDefaultGoVersion(t *testing.T) {
	mod, err := readGoMod(filepath.Join(repoRoot(t), "go.mod"))
	require.NoError(t, err)
	assert.Equal(t, funcmcpModule, mod.module)
	assert.Equal(t, mod.goVersion, defaultGoVersion)
}

// TestRenderApp compares each rendered file with its golden file, for an
// app using a checkout and one requiring a version, and checks that the Go
// templates are gofmt-clean as written.
func TestRenderApp(t *testing.T) {
	tests := []struct {
		name string
		data appData
	}{
		{"replace", appData{Module: "example.com/team/weather", Name: "weather", GoVersion: "1.26.0", Version: replacedVersion, Replace: "/src/funcmcp",
			Requires: []module{{"example.com/dep", "v1.0.0"}, {"golang.org/x/sys", "v0.49.0"}}}},
		{"require", appData{Module: "hello", Name: "hello", GoVersion: "1.26.0", Version: "v1.2.3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			files, err := renderApp(tc.data)
			require.NoError(t, err)
			var names []string
			for _, f := range files {
				names = append(names, f.name)
				golden(t, filepath.Join("newapp", tc.name, f.name+".golden"), f.data)
			}
			sort.Strings(names)
			assert.Equal(t, []string{".gitignore", "Makefile", "go.mod", "host.json", "local.settings.json", "main.go", "main_test.go"}, names)
		})
	}
	for tmpl, file := range appFiles {
		if !strings.HasSuffix(file, ".go") {
			continue
		}
		raw, err := renderTemplate(tmpl, tests[0].data)
		require.NoError(t, err)
		formatted, err := format.Source(raw)
		require.NoError(t, err)
		assert.Equal(t, string(formatted), string(raw), "%s is not gofmt-clean", tmpl)
	}
}

func TestRenderGoModQuotesPaths(t *testing.T) {
	tests := map[string]string{
		"/src/funcmcp":          "replace github.com/funcmcp/funcmcp => /src/funcmcp\n",
		"/home/me/my code/fmcp": `replace github.com/funcmcp/funcmcp => "/home/me/my code/fmcp"` + "\n",
		`C:\src\funcmcp`:        `replace github.com/funcmcp/funcmcp => C:\src\funcmcp` + "\n",
	}
	for dir, want := range tests {
		out, err := renderTemplate("go.mod.tmpl", appData{Module: "a", Name: "a", GoVersion: "1.26.0", Version: replacedVersion, Replace: dir})
		require.NoError(t, err)
		assert.Contains(t, string(out), want)
	}
}

// TestHostJSONShape checks that the new app's host.json uses only keys the
// repository's own host.json has, with the values a local app needs.
func TestHostJSONShape(t *testing.T) {
	out, err := renderTemplate("host.json.tmpl", appData{Module: "a/b", Name: `b"q`})
	require.NoError(t, err)
	var app, repo map[string]any
	require.NoError(t, json.Unmarshal(out, &app), "%s", out)
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "host.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &repo))
	for _, p := range keyPaths("", app) {
		assert.Contains(t, keyPaths("", repo), p, "the repository's host.json has no %s", p)
	}
	get := func(m map[string]any, keys ...string) any {
		var v any = m
		for _, k := range keys {
			v = v.(map[string]any)[k]
		}
		return v
	}
	assert.Equal(t, "handler", get(app, "customHandler", "description", "defaultExecutablePath"))
	assert.Equal(t, get(repo, "extensionBundle"), get(app, "extensionBundle"))
	assert.Equal(t, "Anonymous", get(app, "extensions", "mcp", "system", "webhookAuthorizationLevel"))
	assert.Equal(t, `b"q`, get(app, "extensions", "mcp", "serverName"))

	out, err = renderTemplate("local.settings.json.tmpl", appData{})
	require.NoError(t, err)
	assert.JSONEq(t, `{"IsEncrypted":false,"Values":{"FUNCTIONS_WORKER_RUNTIME":"custom","AzureWebJobsStorage":"UseDevelopmentStorage=true"}}`, string(out))
}

// keyPaths lists the dotted paths of every key in a JSON object.
func keyPaths(prefix string, m map[string]any) []string {
	var out []string
	for k, v := range m {
		p := prefix + k
		out = append(out, p)
		if sub, ok := v.(map[string]any); ok {
			out = append(out, keyPaths(p+".", sub)...)
		}
	}
	return out
}

// TestNewWritesAnAppThatBuilds runs funchost new as a user would on a
// fresh machine: the module cache holds only what building funcmcp's
// worker and funchost downloaded (freshModCache), and the go command may
// fetch nothing (GOPROXY=off). It then checks the folder with the go
// command, still offline, with the default flags and with -mod=mod: gofmt,
// go vet, the app's own test, the build of the handler and of funchost (the
// tool directive), and that none of them wants go.mod or go.sum changed.
func TestNewWritesAnAppThatBuilds(t *testing.T) {
	restore := freshModCache(t)
	dir := filepath.Join(t.TempDir(), "Weather Tools")
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"new", dir}, &stdout, &stderr)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	t.Logf("funchost new:\n%s%s", stdout.String(), stderr.String())

	out := stdout.String()
	assert.Contains(t, out, "Writing "+dir+" (module weather-tools), with github.com/funcmcp/funcmcp from "+repoRoot(t)+" (replace directive):\n")
	for _, f := range []string{".gitignore", "Makefile", "go.mod", "go.sum", "host.json", "local.settings.json", "main.go", "main_test.go"} {
		assert.Contains(t, out, "  "+filepath.Join(dir, f)+"\n")
		assert.FileExists(t, filepath.Join(dir, f))
	}
	assert.True(t, strings.HasSuffix(out, "\n  make -C '"+dir+"' run\n"), out)

	// go.mod, as the go command reads it.
	modJSON := goIn(t, dir, "", "mod", "edit", "-json")
	var mod struct {
		Module  struct{ Path string }
		Go      string
		Require []struct{ Path, Version string }
		Replace []struct{ Old, New struct{ Path string } }
		Tool    []struct{ Path string }
	}
	require.NoError(t, json.Unmarshal([]byte(modJSON), &mod), modJSON)
	assert.Equal(t, "weather-tools", mod.Module.Path)
	assert.Contains(t, mod.Require, struct{ Path, Version string }{funcmcpModule, replacedVersion})
	require.Len(t, mod.Replace, 1)
	assert.Equal(t, funcmcpModule, mod.Replace[0].Old.Path)
	assert.Equal(t, repoRoot(t), mod.Replace[0].New.Path)
	assert.Equal(t, []struct{ Path string }{{funcmcpModule + "/cmd/funchost"}}, mod.Tool)

	for _, file := range []string{"main.go", "main_test.go"} {
		src, err := os.ReadFile(filepath.Join(dir, file))
		require.NoError(t, err)
		formatted, err := format.Source(src)
		require.NoError(t, err)
		assert.Equal(t, string(formatted), string(src), "%s is not gofmt-clean", file)
	}

	// Every package the app, its test and funchost build from loads with
	// that module cache, offline. (Compiling them there would take minutes:
	// the build cache is keyed by source folders, so the checks below run
	// with this machine's module cache.)
	before := readFiles(t, dir, "go.mod", "go.sum")
	for _, goflags := range []string{"", "-mod=mod"} {
		goIn(t, dir, goflags, "list", "-deps", "-test", "./...")
		goIn(t, dir, goflags, "list", "-deps", funcmcpModule+"/cmd/funchost")
		assert.Equal(t, before, readFiles(t, dir, "go.mod", "go.sum"), "go.mod and go.sum are complete (GOFLAGS=%s)", goflags)
	}
	restore()

	for _, goflags := range []string{"", "-mod=mod"} {
		t.Run("GOFLAGS="+goflags, func(t *testing.T) {
			goIn(t, dir, goflags, "vet", "./...")
			test := goIn(t, dir, goflags, "test", "-count=1", "./...")
			assert.Contains(t, test, "ok  \tweather-tools")
			goIn(t, dir, goflags, "build", "-o", filepath.Join(t.TempDir(), "handler"), ".")
			help := goIn(t, dir, goflags, "tool", "funchost", "--help")
			assert.Contains(t, help, "funchost start [flags]")
			assert.Equal(t, before, readFiles(t, dir, "go.mod", "go.sum"), "go.mod and go.sum are complete")
		})
	}

	// A second tool, added as main.go says: the app's own test still passes.
	mainGo := readFiles(t, dir, "main.go")["main.go"]
	require.Contains(t, mainGo, "\treturn app\n}")
	second := strings.Replace(mainGo, "\treturn app\n}", `	worker.AddTool(app, "echo", func(_ context.Context, _ *worker.ToolContext, in TextStatsInput) (*worker.Result, TextStatsInput, error) {
		return nil, in, nil
	}).WithDescription("Echo the text.")
	return app
}`, 1)
	writeFile(t, dir, "main.go", second)
	test := goIn(t, dir, "", "test", "-count=1", "./...")
	assert.Contains(t, test, "ok  \tweather-tools")

	// Again into the same folder: refused, then replaced with --force.
	stdout.Reset()
	stderr.Reset()
	code = run(t.Context(), []string{"new", dir}, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.Contains(t, stderr.String(), dir+" is not empty (it holds .gitignore, Makefile, go.mod, and 5 more)")
	writeFile(t, dir, "main.go", "package main // mine\n")
	stdout.Reset()
	stderr.Reset()
	code = run(t.Context(), []string{"new", "--force", "--module", "example.com/weather", dir}, &stdout, &stderr)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	assert.Contains(t, stdout.String(), "  "+filepath.Join(dir, "main.go")+" (replaced)\n")
	assert.Contains(t, stdout.String(), "Writing "+dir+" (module example.com/weather)")
	src, err := os.ReadFile(filepath.Join(dir, "main.go"))
	require.NoError(t, err)
	assert.Contains(t, string(src), "worker.AddTool(app, \"text_stats\"")
}

// TestNewReportsListFailure points --funcmcp at a module that is called
// funcmcp but has none of its packages: go list's own output is shown, the
// message says what failed, and nothing is written.
func TestNewReportsListFailure(t *testing.T) {
	fake := t.TempDir()
	writeFile(t, fake, "go.mod", "module github.com/funcmcp/funcmcp\n\ngo 1.26.0\n")
	dir := filepath.Join(t.TempDir(), "app")
	var stdout, stderr bytes.Buffer
	code := run(t.Context(), []string{"new", "--funcmcp", fake, dir}, &stdout, &stderr)
	assert.Equal(t, 1, code)
	assert.NoDirExists(t, dir)
	assert.Contains(t, stdout.String(), "Listing the modules funcmcp's worker and funchost build with (in "+fake+")")
	assert.Contains(t, stderr.String(), "worker", "go list's own output")
	assert.Contains(t, stderr.String(), "funchost new: listing the modules "+fake+" builds github.com/funcmcp/funcmcp/worker, github.com/funcmcp/funcmcp/funcmcptest and github.com/funcmcp/funcmcp/cmd/funchost with: running go list: exit status 1")
	assert.NotContains(t, stdout.String(), "Done.")
}

// freshModCache points the go command at a new, empty module cache
// (GOMODCACHE) for the rest of the test, fills it with what building
// funcmcp's worker and funchost downloads and nothing else, taken from the
// module cache of this machine (a file:// GOPROXY), then turns the network
// off (GOPROXY=off): the state of a fresh clone after its first build.
// restore goes back to this machine's module cache, offline.
func freshModCache(t *testing.T) (restore func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), goTimeout)
	defer cancel()
	env := exec.CommandContext(ctx, "go", "env", "GOMODCACHE")
	env.Env = append(os.Environ(), "GOWORK=off")
	out, err := env.Output()
	require.NoError(t, err)
	from := filepath.Join(strings.TrimSpace(string(out)), "cache", "download")
	// This machine's module cache holds them once funcmcp's packages are
	// loaded there: go list fetches them as any build of funcmcp would,
	// only when they are missing (this test binary does not link worker).
	load := exec.CommandContext(ctx, "go", "list", "-deps", "./worker", "./cmd/funchost")
	load.Dir, load.Env = repoRoot(t), append(os.Environ(), "GOWORK=off")
	var log bytes.Buffer
	load.Stdout, load.Stderr = io.Discard, &log
	require.NoError(t, load.Run(), "loading funcmcp's packages:\n%s", log.String())
	cache := t.TempDir()
	// -modcacherw: the test's temporary folder can be removed.
	t.Setenv("GOFLAGS", "-modcacherw")
	t.Setenv("GOMODCACHE", cache)
	t.Setenv("GOWORK", "off")
	t.Setenv("GOSUMDB", "off") // go.sum has every sum; nothing is looked up
	t.Setenv("GOPROXY", "file://"+filepath.ToSlash(from))
	fill := exec.CommandContext(ctx, "go", "list", "-deps", "./worker", "./cmd/funchost")
	fill.Dir = repoRoot(t)
	log.Reset()
	fill.Stdout, fill.Stderr = io.Discard, &log
	require.NoError(t, fill.Run(), "filling the module cache:\n%s", log.String())
	t.Setenv("GOPROXY", "off")
	return func() {
		t.Setenv("GOMODCACHE", filepath.Dir(filepath.Dir(from)))
		t.Setenv("GOFLAGS", "")
	}
}

// goIn runs the go command in dir, offline, and returns its output.
func goIn(t *testing.T, dir, goflags string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), goTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOFLAGS=-modcacherw "+goflags, "GOWORK=off")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	require.NoError(t, err, "go %s (GOFLAGS=%s):\n%s", strings.Join(args, " "), goflags, out.String())
	return out.String()
}

func readFiles(t *testing.T, dir string, names ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		require.NoError(t, err)
		out[n] = string(data)
	}
	return out
}

// golden compares got with testdata/name, rewriting it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	file := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(file), 0o755))
		require.NoError(t, os.WriteFile(file, got, 0o644))
		return
	}
	want, err := os.ReadFile(file)
	require.NoError(t, err, "run go test -update to write it")
	assert.Equal(t, string(want), string(got), fmt.Sprintf("%s differs from the golden file (go test -update accepts it)", file))
}
