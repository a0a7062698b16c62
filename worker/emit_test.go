package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/metadata"
)

type goldenIn struct {
	Query   string            `json:"query" description:"What to search for"`
	Limit   uint8             `json:"limit,omitempty" description:"At most this many"`
	Kinds   []string          `json:"kinds,omitempty" enum:"doc,code"`
	Since   *time.Time        `json:"since,omitempty"`
	Filters map[string]string `json:"filters,omitempty"`
	Exact   bool              `json:"exact,string,omitempty"`
}

type goldenHit struct {
	Title string          `json:"title"`
	Score float64         `json:"score"`
	Raw   json.RawMessage `json:"raw,omitempty"`
	Blob  []byte          `json:"blob,omitempty"`
}

type goldenOut struct {
	Hits  []goldenHit `json:"hits" description:"Best first"`
	Total int64       `json:"total"`
	Next  *string     `json:"next"`
}

// goldenApp has one tool per emission feature.
func goldenApp() *App {
	a := New(&Options{Stdout: io.Discard, Stderr: io.Discard})
	AddTool(a, "search", func(context.Context, *ToolContext, goldenIn) (*Result, goldenOut, error) {
		return nil, goldenOut{}, nil
	}).
		WithDescription("Searches <docs> & code.").WithTitle("Search").
		WithMetadata("ui", map[string]any{"visibility": []string{"model"}}).WithMetadata("version", 1.5)
	AddTool(a, "count", func(context.Context, *ToolContext, struct{}) (*Result, int, error) { return nil, 0, nil }).
		WithDescription("Counts.").WithOutputField("count")
	a.ConfigureMcpTool("SchemaTool").WithFunctionName("schema_tool").
		WithDescription("A tool with explicit input and output schemas.").
		WithInputSchema(`{"type":"object","properties":{"location":{"type":"string","description":"The city and state, e.g. San Francisco, CA"},"units":{"type":"string","description":"The unit system for temperature","enum":["celsius","fahrenheit"]}},"required":["location"]}`).
		WithOutputSchema(`{"type":"object","properties":{"location":{"type":"string"},"units":{"type":"string"},"forecast":{"type":"string"}},"required":["location","units","forecast"]}`).
		Handle(noop)
	a.ConfigureMcpTool("FluentDefinedTool").WithFunctionName("fluent").
		WithDescription("A tool with properties defined via the fluent builder API.").
		WithProperty("city", String, "The city name.", Required).
		WithProperty("zipCode", String, "The ZIP code.", Optional).
		WithProperty("days", Integer.Array(), "Days.", Optional).
		Handle(noop)
	a.ConfigureMcpTool("plain").Handle(noop)
	return a
}

func TestGoldenFunctions(t *testing.T) {
	fns, err := goldenApp().Functions()
	requireNoError(t, err, "Functions")
	var names []string
	for _, f := range fns {
		names = append(names, f.Name)
		data, err := f.Encode()
		requireNoError(t, err, "Encode")
		golden(t, filepath.Join("functions", f.Name, "function.json"), data)
		// what we emit, the host accepts
		for _, b := range f.ToolTriggers() {
			for key, kind := range map[string]binding.SchemaKind{metadata.KeyInputSchema: binding.InputSchema, metadata.KeyOutputSchema: binding.OutputSchema} {
				if s, ok := b.LookupString(key); ok {
					if _, err := binding.ParseSchema(kind, s); err != nil {
						t.Errorf("%s %s: %v", f.Name, key, err)
					}
				}
			}
		}
		back, err := metadata.ParseFunction(f.Name, "", data)
		requireNoError(t, err, "ParseFunction of emitted data")
		again, _ := back.Encode()
		if !bytes.Equal(again, data) {
			t.Errorf("%s does not round-trip", f.Name)
		}
	}
	if got := strings.Join(names, ","); got != "count,fluent,plain,schema_tool,search" {
		t.Errorf("functions = %s, want sorted by name", got)
	}
	// emission is deterministic
	fns2, _ := goldenApp().Functions()
	for i := range fns {
		a, _ := fns[i].Encode()
		b, _ := fns2[i].Encode()
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two builds", fns[i].Name)
		}
	}
}

func TestEmitMetadata(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "dist", "app")
	requireNoError(t, goldenApp().EmitMetadata(dir), "EmitMetadata")
	entries, err := os.ReadDir(dir)
	requireNoError(t, err, "ReadDir")
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
		inner, _ := os.ReadDir(filepath.Join(dir, e.Name()))
		if len(inner) != 1 || inner[0].Name() != "function.json" {
			t.Errorf("%s holds %v, want only function.json", e.Name(), inner)
		}
	}
	if strings.Join(got, ",") != "count,fluent,plain,schema_tool,search" {
		t.Errorf("folders = %v", got)
	}
	fns, errs, err := metadata.ReadApp(dir, nil)
	requireNoError(t, err, "ReadApp")
	if len(errs) != 0 || len(fns) != 5 {
		t.Fatalf("ReadApp: %d functions, errors %v", len(fns), errs)
	}
	want, _ := os.ReadFile(filepath.Join("testdata", "functions", "search", "function.json"))
	have, _ := os.ReadFile(filepath.Join(dir, "search", "function.json"))
	if !bytes.Equal(want, have) {
		t.Errorf("written search/function.json differs from the golden file")
	}
	// a second run overwrites in place and leaves other folders alone
	requireNoError(t, os.MkdirAll(filepath.Join(dir, "stale"), 0o755), "mkdir")
	requireNoError(t, goldenApp().EmitMetadata(dir), "EmitMetadata again")
	if _, err := os.Stat(filepath.Join(dir, "stale")); err != nil {
		t.Error("a folder EmitMetadata does not own was removed")
	}
}

func brokenApp() *App {
	a := goldenApp()
	a.ConfigureMcpTool("bad_schema").WithOutputSchema(`["not","a","schema"]`).Handle(noop)
	a.ConfigureMcpTool("no_handler")
	a.ConfigureMcpTool("bad.name").Handle(noop)
	return a
}

func TestEmitWritesNothingOnError(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "out")
	err := brokenApp().EmitMetadata(dir)
	if err == nil {
		t.Fatal("EmitMetadata succeeded")
	}
	if n := len(configErrors(t, err)); n != 3 {
		t.Errorf("%d problems, want 3: %v", n, err)
	}
	if _, serr := os.Stat(dir); !os.IsNotExist(serr) {
		t.Errorf("output folder exists after a failed emission (%v)", serr)
	}
}

func TestRunArgs(t *testing.T) {
	t.Setenv(metadata.EnvCustomHandlerPort, "")
	t.Setenv(metadata.EnvHTTPWorkerPort, "")
	tests := []struct {
		name     string
		app      func() *App
		args     func(dir string) []string
		code     int
		stdout   []string
		stderr   []string
		wroteAll bool
		wroteNo  bool
	}{
		{"emit ok", goldenApp, func(d string) []string { return []string{"/bin/myapp", "emit-metadata", d} }, 0,
			[]string{"wrote ", filepath.Join("search", "function.json")}, nil, true, false},
		{"emit broken", brokenApp, func(d string) []string { return []string{"/bin/myapp", "emit-metadata", d} }, 1,
			nil, []string{"nothing was written", "3 problem(s)", `tool "bad_schema"`, "output schema must be a JSON object or boolean", `tool "no_handler"`, "no handler", `tool "bad.name"`, "WithFunctionName"}, false, true},
		{"emit without dir", goldenApp, func(string) []string { return []string{"myapp", "emit-metadata"} }, 2, nil, []string{"exactly one directory", "usage"}, false, true},
		{"emit two dirs", goldenApp, func(d string) []string { return []string{"myapp", "emit-metadata", d, d} }, 2, nil, []string{"exactly one directory"}, false, true},
		{"unknown command", goldenApp, func(string) []string { return []string{"myapp", "serve"} }, 2, nil, []string{`unknown command "serve"`, "usage"}, false, true},
		{"help", goldenApp, func(string) []string { return []string{"/x/myapp", "--help"} }, 0, []string{"myapp emit-metadata DIR"}, nil, false, true},
		{"serve without port", goldenApp, func(string) []string { return []string{"myapp"} }, 1, nil, []string{"FUNCTIONS_CUSTOMHANDLER_PORT", "FUNCTIONS_HTTPWORKER_PORT"}, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "app")
			var stdout, stderr bytes.Buffer
			code := tc.app().RunArgs(context.Background(), tc.args(dir), &stdout, &stderr)
			if code != tc.code {
				t.Errorf("exit code = %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, &stdout, &stderr)
			}
			for _, s := range tc.stdout {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q: %s", s, &stdout)
				}
			}
			for _, s := range tc.stderr {
				if !strings.Contains(stderr.String(), s) {
					t.Errorf("stderr lacks %q: %s", s, &stderr)
				}
			}
			if tc.code == 0 && stderr.Len() > 0 {
				t.Errorf("stderr on success: %s", &stderr)
			}
			_, err := os.Stat(dir)
			if tc.wroteNo && !os.IsNotExist(err) {
				t.Errorf("%s was created", dir)
			}
			if tc.wroteAll {
				entries, _ := os.ReadDir(dir)
				if len(entries) != 5 {
					t.Errorf("%d folders written", len(entries))
				}
			}
		})
	}
}

func freePort(t *testing.T) string {
	return strconv.Itoa(testutil.FreePort(t))
}

func waitReady(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		res, err := http.Get(url)
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
		}
		time.Sleep(10 * time.Millisecond) // polling for readiness, as the host does
	}
	t.Fatalf("%s not ready", url)
}

func TestRunArgsServes(t *testing.T) {
	for _, env := range []string{metadata.EnvCustomHandlerPort, metadata.EnvHTTPWorkerPort} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(metadata.EnvCustomHandlerPort, "")
			t.Setenv(metadata.EnvHTTPWorkerPort, "")
			port := freePort(t)
			t.Setenv(env, port)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var stdout, stderr syncBuffer
			done := make(chan int, 1)
			app := goldenApp()
			fns, err := app.Functions()
			requireNoError(t, err, "functions")
			go func() { done <- app.RunArgs(ctx, nil, &stdout, &stderr) }()
			url := "http://127.0.0.1:" + port
			waitReady(t, url+"/")
			r := post(t, url, "plain", body(t, `{"name":"plain"}`, 1))
			if r.status != 200 || r.env.Type != "text" {
				t.Errorf("invoke: %d %s", r.status, r.body)
			}
			if want := fmt.Sprintf("serving %d tool(s) on 127.0.0.1:%s\n", len(fns), port); stdout.String() != want {
				t.Errorf("stdout = %q, want %q", stdout.String(), want)
			}
			cancel()
			select {
			case code := <-done:
				if code != 0 {
					t.Errorf("exit code %d: %s", code, stderr.String())
				}
			case <-time.After(15 * time.Second):
				t.Fatal("RunArgs did not return after the context was done")
			}
		})
	}
}

// TestServeReturnsConfigurationErrors: Serve reports a broken
// configuration, as ListenAndServe does, instead of serving 500s, and
// closes the listener it was given.
func TestServeReturnsConfigurationErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	requireNoError(t, err, "listen")
	err = brokenApp().Serve(context.Background(), l)
	var ce *ConfigError
	if !errors.As(err, &ce) || len(problems(err)) != 3 {
		t.Fatalf("Serve = %v, want the 3 configuration problems", err)
	}
	if c, err := net.Dial("tcp", l.Addr().String()); err == nil {
		c.Close()
		t.Error("the listener is still open")
	}
	if err := brokenApp().ListenAndServe(context.Background(), "127.0.0.1:0"); !errors.As(err, &ce) {
		t.Errorf("ListenAndServe = %v", err)
	}
}

func TestRunArgsServeRejectsBrokenConfiguration(t *testing.T) {
	t.Setenv(metadata.EnvCustomHandlerPort, freePort(t))
	var stderr bytes.Buffer
	code := brokenApp().RunArgs(context.Background(), nil, io.Discard, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), "3 problem(s)") {
		t.Errorf("code %d stderr %s", code, &stderr)
	}
}

func TestListenAndServeShutdown(t *testing.T) {
	a := goldenApp()
	a.shutdownTimeout = 2 * time.Second
	l, err := net.Listen("tcp", "127.0.0.1:0")
	requireNoError(t, err, "listen")
	url := fmt.Sprintf("http://%s/", l.Addr())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, l) }()
	waitReady(t, url)
	cancel()
	select {
	case err := <-done:
		requireNoError(t, err, "Serve")
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return")
	}
	if _, err := http.Get(url); err == nil {
		t.Error("still serving after shutdown")
	}
	if err := brokenApp().ListenAndServe(context.Background(), "127.0.0.1:0"); err == nil {
		t.Error("ListenAndServe started with a broken configuration")
	}
}

// TestEmitWarnsAboutStaleFunctions: a function folder left from a renamed or
// removed tool is reported (a host would still serve it) and left in place.
func TestEmitWarnsAboutStaleFunctions(t *testing.T) {
	dir := t.TempDir()
	stale := filepath.Join(dir, "old_tool", metadata.FunctionFile)
	if err := os.MkdirAll(filepath.Dir(stale), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(stale, []byte(`{"bindings":[{"type":"mcpToolTrigger","name":"context","direction":"in","toolName":"old_tool","description":""}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// A folder without function.json is not a function: no warning.
	if err := os.MkdirAll(filepath.Join(dir, "assets"), 0o755); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := goldenApp().RunArgs(context.Background(), []string{"app", "emit-metadata", dir}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit code %d: %s", code, &stderr)
	}
	want := "emit-metadata: warning: " + stale + " is not a function of this app"
	if !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q: %s", want, &stderr)
	}
	if n := strings.Count(stderr.String(), "warning:"); n != 1 {
		t.Errorf("%d warnings, want 1: %s", n, &stderr)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Errorf("the stale function.json was removed: %v", err)
	}
}
