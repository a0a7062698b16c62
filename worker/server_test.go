package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

type greetIn struct {
	Name  string   `json:"name"`
	Times int      `json:"times,omitempty"`
	Tags  []string `json:"tags,omitempty"`
	Inner struct {
		Level int `json:"level"`
	} `json:"inner,omitempty"`
}

type greetOut struct {
	Greeting string `json:"greeting"`
	Times    int    `json:"times"`
}

// testApp is an app with one tool of each kind.
func testApp(t testing.TB, stderr io.Writer) (*App, *seen) {
	return testAppWith(t, &Options{Stderr: stderr, Stdout: io.Discard})
}

// testAppWith is testApp with these options.
func testAppWith(t testing.TB, opts *Options) (*App, *seen) {
	s := &seen{}
	a := New(opts)
	AddTool(a, "greet", func(ctx context.Context, tc *ToolContext, in greetIn) (*Result, greetOut, error) {
		s.set(tc)
		tc.Logf("greeting %s", in.Name)
		if in.Name == "" {
			return nil, greetOut{}, errors.New("name must not be empty")
		}
		return nil, greetOut{Greeting: "Hello, " + in.Name + " <&>", Times: in.Times}, nil
	}).WithDescription("Greets.")
	AddTool(a, "list", func(ctx context.Context, tc *ToolContext, in struct{}) (*Result, []string, error) {
		return nil, []string{"a", "b"}, nil
	}).WithOutputField("items").WithFunctionName("list_items")
	AddTool(a, "nilmap", func(ctx context.Context, tc *ToolContext, in struct{}) (*Result, map[string]int, error) {
		return nil, nil, nil
	})
	AddTool(a, "nilptr", func(ctx context.Context, tc *ToolContext, in struct{}) (*Result, *greetOut, error) {
		return nil, nil, nil
	})
	a.ConfigureMcpTool("echo").Handle(func(ctx context.Context, tc *ToolContext) (*Result, error) {
		var in struct {
			Message string `json:"message"`
		}
		if err := tc.BindArguments(&in); err != nil {
			return nil, err
		}
		return TextResult(in.Message), nil
	})
	a.ConfigureMcpTool("multi").Handle(func(ctx context.Context, tc *ToolContext) (*Result, error) {
		return &Result{Content: []Content{Text("one"), Image([]byte{1, 2, 3}, "image/png")}}, nil
	})
	a.ConfigureMcpTool("image").Handle(func(ctx context.Context, tc *ToolContext) (*Result, error) {
		return &Result{Content: []Content{Image([]byte("png"), "image/png")}}, nil
	})
	a.ConfigureMcpTool("structured").Handle(func(ctx context.Context, tc *ToolContext) (*Result, error) {
		return &Result{Content: []Content{Audio([]byte("x"), "audio/wav")}, StructuredContent: map[string]any{"ok": true}}, nil
	})
	a.ConfigureMcpTool("nothing").Handle(func(ctx context.Context, tc *ToolContext) (*Result, error) { return nil, nil })
	a.ConfigureMcpTool("badblock").Handle(func(ctx context.Context, tc *ToolContext) (*Result, error) {
		return &Result{Content: []Content{Content(`"just a string"`)}}, nil
	})
	a.ConfigureMcpTool("boom").Handle(func(ctx context.Context, tc *ToolContext) (*Result, error) {
		panic("kaboom")
	})
	return a, s
}

type seen struct {
	mu sync.Mutex
	tc *ToolContext
}

func (s *seen) set(tc *ToolContext) { s.mu.Lock(); s.tc = tc; s.mu.Unlock() }
func (s *seen) get() *ToolContext   { s.mu.Lock(); defer s.mu.Unlock(); return s.tc }

// body builds an invocation request whose context is string-encoded depth times.
func body(t testing.TB, ctx string, depth int) string {
	raw := []byte(ctx)
	for i := 0; i < depth; i++ {
		raw, _ = json.Marshal(string(raw))
	}
	return fmt.Sprintf(`{"Data":{"context":%s},"Metadata":{"sys":{"MethodName":"x"}}}`, raw)
}

type reply struct {
	status int
	ctype  string
	body   string
	resp   metadata.InvocationResponse
	env    metadata.ToolResult
	result metadata.CallToolResult // for call_tool_result envelopes
}

func post(t testing.TB, url, fn, payload string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/"+fn, strings.NewReader(payload))
	requireNoError(t, err, "request")
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set(metadata.HeaderInvocationID, "inv-123")
	res, err := http.DefaultClient.Do(req)
	requireNoError(t, err, "POST")
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	r := reply{status: res.StatusCode, ctype: res.Header.Get("Content-Type"), body: string(data)}
	if res.StatusCode != http.StatusOK {
		return r
	}
	requireNoError(t, json.Unmarshal(data, &r.resp), "response body")
	var s string
	requireNoError(t, json.Unmarshal(r.resp.ReturnValue, &s), "ReturnValue is a JSON string")
	requireNoError(t, json.Unmarshal([]byte(s), &r.env), "envelope")
	if r.env.Type == metadata.ResultTypeCallToolResult {
		requireNoError(t, json.Unmarshal([]byte(r.env.Content), &r.result), "call tool result")
	}
	return r
}

func textOf(t testing.TB, r reply) string {
	t.Helper()
	if len(r.result.Content) == 0 {
		t.Fatalf("no content: %s", r.body)
	}
	var b struct{ Type, Text string }
	requireNoError(t, json.Unmarshal(r.result.Content[0], &b), "block")
	return b.Text
}

func TestInvokeTypedAtEveryEncodingDepth(t *testing.T) {
	a, s := testApp(t, io.Discard)
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	ctx := `{"name":"greet","arguments":{"name":"Ada","times":2},"sessionid":"s1","clientinfo":{"name":"cli","version":"1.0"},
		"transport":{"name":"http-streamable","sessionId":"s1","properties":{"headers":{"X-Test":"yes"}}}}`
	for depth := 0; depth <= 2; depth++ {
		t.Run(fmt.Sprintf("depth %d", depth), func(t *testing.T) {
			r := post(t, srv.URL, "greet", body(t, ctx, depth))
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			if !strings.HasPrefix(r.ctype, "application/json") {
				t.Errorf("Content-Type = %q", r.ctype)
			}
			if r.env.Type != metadata.ResultTypeCallToolResult {
				t.Fatalf("envelope type = %q", r.env.Type)
			}
			const want = `{"greeting":"Hello, Ada <&>","times":2}`
			if r.env.StructuredContent == nil {
				t.Fatal("envelope structuredContent missing")
			}
			assertJSONEq(t, want, *r.env.StructuredContent, "envelope structuredContent")
			assertJSONEq(t, want, string(r.result.StructuredContent), "structuredContent")
			assertJSONEq(t, want, textOf(t, r), "text block")
			if r.result.IsError {
				t.Error("isError set")
			}
			if len(r.resp.Logs) != 1 || r.resp.Logs[0] != "greeting Ada" {
				t.Errorf("Logs = %q", r.resp.Logs)
			}
			if r.resp.Outputs == nil || len(r.resp.Outputs) != 0 {
				t.Errorf("Outputs = %v, want {}", r.resp.Outputs)
			}
			if !strings.Contains(r.body, `"Outputs":{}`) {
				t.Errorf("body lacks Outputs:{}: %s", r.body)
			}
			tc := s.get()
			if tc.InvocationID != "inv-123" || tc.FunctionName != "greet" || tc.Name != "greet" || tc.SessionID != "s1" {
				t.Errorf("tool context = %+v", tc)
			}
			if tc.ClientInfo == nil || tc.ClientInfo.Name != "cli" {
				t.Errorf("client info = %+v", tc.ClientInfo)
			}
			if h, ok := tc.Header("x-test"); !ok || h != "yes" {
				t.Errorf("header = %q %v", h, ok)
			}
		})
	}
}

// invokeCase is one invocation and the result it must give.
type invokeCase struct {
	name, fn, args string
	envType        string
	isError        bool
	structured     string // "" = none
	text           string // first block text ("" = don't check)
	blocks         int
}

func TestInvokeResults(t *testing.T) {
	runInvokeCases(t, &Options{}, []invokeCase{
		{"wrapped slice", "list_items", `{}`, "call_tool_result", false, `{"items":["a","b"]}`, `{"items":["a","b"]}`, 1},
		{"function name case-insensitive", "LIST_ITEMS", `{}`, "call_tool_result", false, `{"items":["a","b"]}`, "", 1},
		{"nil map is an empty object", "nilmap", `{}`, "call_tool_result", false, `{}`, `{}`, 1},
		{"nil pointer sends the zero value", "nilptr", `{}`, "call_tool_result", false, `{"greeting":"","times":0}`, `{"greeting":"","times":0}`, 1},
		{"plain text", "echo", `{"message":"hi"}`, "text", false, "", "", 0},
		{"raw bind error", "echo", `{"message":5}`, "call_tool_result", true, "", `invalid argument "message": got number, want string`, 1},
		{"several blocks", "multi", `{}`, "call_tool_result", false, "", "one", 2},
		{"single image", "image", `{}`, "image", false, "", "", 0},
		{"structured without text gets a text block", "structured", `{}`, "call_tool_result", false, `{"ok":true}`, "", 2},
		{"nil result", "nothing", `{}`, "call_tool_result", false, "", "", 0},
		{"invalid block", "badblock", `{}`, "call_tool_result", true, "", `tool badblock returned an invalid result: content block 0: a content block must be a JSON object, not "just a string"`, 1},
		{"handler error", "greet", `{"name":""}`, "call_tool_result", true, "", "name must not be empty", 1},
		// Arguments are checked against the input schema before the handler
		// runs (inputValidation strict, the default).
		{"argument type", "greet", `{"name":"x","times":"two"}`, "call_tool_result", true, "",
			"Input of tool 'greet' does not match its input schema: at '/times' (/properties/times/type): got string, want integer", 1},
		{"argument name case", "greet", `{"Name":"x","TIMES":"two"}`, "call_tool_result", true, "",
			"Input of tool 'greet' does not match its input schema: at '' (/additionalProperties): additional properties 'Name', 'TIMES' not allowed; at '' (/required): missing property 'name'", 1},
		{"nested argument", "greet", `{"name":"x","inner":{"level":1.5}}`, "call_tool_result", true, "",
			"Input of tool 'greet' does not match its input schema: at '/inner/level' (/properties/inner/properties/level/type): got number, want integer", 1},
		{"array argument", "greet", `{"name":"x","tags":"a"}`, "call_tool_result", true, "",
			"Input of tool 'greet' does not match its input schema: at '/tags' (/properties/tags/type): got string, want array", 1},
		{"unknown argument", "greet", `{"name":"x","extra":1}`, "call_tool_result", true, "",
			"Input of tool 'greet' does not match its input schema: at '' (/additionalProperties): additional properties 'extra' not allowed", 1},
		{"no arguments at all", "greet", `null`, "call_tool_result", true, "",
			"Input of tool 'greet' does not match its input schema: at '' (/required): missing property 'name'", 1},
	})
}

// TestInvokeResultsWithoutInputValidation: with inputValidation off, the
// arguments reach the handler as they are; binding them still names the
// argument that does not fit (names matched case-insensitively, as the .NET
// worker does; unknown arguments ignored).
func TestInvokeResultsWithoutInputValidation(t *testing.T) {
	runInvokeCases(t, &Options{InputValidation: ValidationOff}, []invokeCase{
		{"argument type", "greet", `{"name":"x","times":"two"}`, "call_tool_result", true, "", `invalid argument "times": got string, want integer`, 1},
		{"argument name case", "greet", `{"Name":"x","TIMES":"two"}`, "call_tool_result", true, "", `invalid argument "TIMES": got string, want integer`, 1},
		{"nested argument", "greet", `{"name":"x","inner":{"level":1.5}}`, "call_tool_result", true, "", `invalid argument "inner": at level: got number 1.5, want integer`, 1},
		{"array argument", "greet", `{"name":"x","tags":"a"}`, "call_tool_result", true, "", `invalid argument "tags": got string, want array`, 1},
		{"unknown arguments are ignored", "greet", `{"name":"x","extra":1}`, "call_tool_result", false, `{"greeting":"Hello, x <&>","times":0}`, "", 1},
	})
	// warn: the call goes on, and the problem is in the invocation's logs.
	a, _ := testAppWith(t, &Options{Stderr: io.Discard, Stdout: io.Discard, InputValidation: ValidationWarn})
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	r := post(t, srv.URL, "greet", body(t, `{"name":"t","arguments":{"name":"x","extra":1}}`, 1))
	require.Equal(t, http.StatusOK, r.status)
	assert.False(t, r.result.IsError, "under warn the handler runs: %s", r.body)
	require.NotEmpty(t, r.resp.Logs)
	assert.Equal(t, "Input of tool 'greet' does not match its input schema: at '' (/additionalProperties): additional properties 'extra' not allowed (called anyway: inputValidation is warn)", r.resp.Logs[0])
}

func runInvokeCases(t *testing.T, opts *Options, tests []invokeCase) {
	var stderr syncBuffer
	o := *opts
	o.Stderr, o.Stdout = &stderr, io.Discard
	a, _ := testAppWith(t, &o)
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := fmt.Sprintf(`{"name":"t","arguments":%s}`, tc.args)
			r := post(t, srv.URL, tc.fn, body(t, ctx, 1))
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			if r.env.Type != tc.envType {
				t.Fatalf("envelope type = %q, want %q (%s)", r.env.Type, tc.envType, r.body)
			}
			if tc.envType != metadata.ResultTypeCallToolResult {
				if metadata.ContentType(json.RawMessage(r.env.Content)) != tc.envType {
					t.Errorf("block %s is not of type %s", r.env.Content, tc.envType)
				}
				if r.env.StructuredContent != nil {
					t.Errorf("structuredContent set on a single block")
				}
				return
			}
			if r.result.IsError != tc.isError {
				t.Errorf("isError = %v, want %v (%s)", r.result.IsError, tc.isError, r.env.Content)
			}
			if len(r.result.Content) != tc.blocks {
				t.Errorf("%d blocks, want %d: %s", len(r.result.Content), tc.blocks, r.env.Content)
			}
			if tc.structured == "" {
				if r.result.StructuredContent != nil || r.env.StructuredContent != nil {
					t.Errorf("structuredContent set: %s", r.env.Content)
				}
			} else {
				assertJSONEq(t, tc.structured, string(r.result.StructuredContent), "structuredContent")
				if r.env.StructuredContent == nil {
					t.Error("envelope structuredContent missing")
				} else {
					assertJSONEq(t, tc.structured, *r.env.StructuredContent, "envelope structuredContent")
				}
			}
			if tc.text != "" {
				if got := textOf(t, r); got != tc.text && !(strings.HasPrefix(tc.text, "{") && normJSON(t, got) == normJSON(t, tc.text)) {
					t.Errorf("text = %q, want %q", got, tc.text)
				}
			}
		})
	}
}

func TestPanicKeepsServing(t *testing.T) {
	var stderr syncBuffer
	a, _ := testApp(t, &stderr)
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	r := post(t, srv.URL, "boom", body(t, `{"name":"boom"}`, 1))
	if r.status != http.StatusOK || !r.result.IsError {
		t.Fatalf("status %d isError %v: %s", r.status, r.result.IsError, r.body)
	}
	if got := textOf(t, r); got != "tool boom panicked: kaboom" {
		t.Errorf("text = %q", got)
	}
	if s := stderr.String(); !strings.Contains(s, "tool boom panicked: kaboom") || !strings.Contains(s, "goroutine") {
		t.Errorf("stderr lacks the panic and its stack: %q", s)
	}
	r = post(t, srv.URL, "echo", body(t, `{"name":"echo","arguments":{"message":"still here"}}`, 0))
	if r.status != http.StatusOK || r.env.Type != "text" || !strings.Contains(r.env.Content, "still here") {
		t.Errorf("next request: %d %s", r.status, r.body)
	}
}

// syncBuffer is a goroutine-safe buffer for process output and logs.
type syncBuffer = testutil.SyncBuffer

func TestProtocolErrors(t *testing.T) {
	a, _ := testApp(t, io.Discard)
	a.maxBody = 1 << 10
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	tests := []struct {
		name, fn, payload string
		status            int
		contains          string
	}{
		{"unknown function", "nope", body(t, `{"name":"x"}`, 1), 404, `no function \"nope\"`},
		{"bad JSON", "echo", `{"Data":`, 400, "decoding the invocation request"},
		{"not an object", "echo", `[1]`, 400, "decoding the invocation request"},
		{"no context", "echo", `{"Data":{},"Metadata":{}}`, 400, `no \"context\" entry`},
		{"context not an object", "echo", `{"Data":{"context":"\"just text\""}}`, 400, "not a JSON object"},
		{"too large", "echo", `{"Data":{"context":"` + strings.Repeat("x", 2<<10) + `"}}`, 413, "larger than"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, srv.URL, tc.fn, tc.payload)
			if r.status != tc.status {
				t.Fatalf("status = %d, want %d: %s", r.status, tc.status, r.body)
			}
			if !strings.HasPrefix(r.ctype, "application/json") {
				t.Errorf("Content-Type = %q", r.ctype)
			}
			var e struct{ Error string }
			requireNoError(t, json.Unmarshal([]byte(r.body), &e), "error body")
			if !strings.Contains(r.body, tc.contains) || e.Error == "" {
				t.Errorf("body %s does not contain %s", r.body, tc.contains)
			}
		})
	}
	t.Run("keys are case-insensitive", func(t *testing.T) {
		r := post(t, srv.URL, "echo", `{"data":{"CONTEXT":{"name":"echo","arguments":{"message":"ci"}}},"metadata":{}}`)
		if r.status != 200 || r.env.Type != "text" || !strings.Contains(r.env.Content, "ci") {
			t.Errorf("%d %s", r.status, r.body)
		}
	})
}

func TestReadinessAndRouting(t *testing.T) {
	a, _ := testApp(t, io.Discard)
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	res, err := http.Get(srv.URL + "/")
	requireNoError(t, err, "GET /")
	data, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !json.Valid(data) {
		t.Errorf("GET / = %d %s", res.StatusCode, data)
	}
	res, err = http.Get(srv.URL + "/echo")
	requireNoError(t, err, "GET /echo")
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET /echo = %d, want 405", res.StatusCode)
	}
}

func TestHandlerWithBrokenConfiguration(t *testing.T) {
	a := New(&Options{Stderr: io.Discard})
	a.ConfigureMcpTool("broken")
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	r := post(t, srv.URL, "broken", body(t, `{"name":"broken"}`, 0))
	if r.status != 500 || !strings.Contains(r.body, "no handler") {
		t.Errorf("%d %s", r.status, r.body)
	}
}

// BenchmarkInvoke_NoNetwork measures one invocation through the worker's
// handler, in process: no HTTP connection, no host.
// BenchmarkInvoke_NoNetwork is one typed invocation through Handler, with
// the worker's output validation on (the default) and off.
func BenchmarkInvoke_NoNetwork(b *testing.B) {
	payload := []byte(body(b, `{"name":"greet","arguments":{"name":"Ada","times":2},"sessionid":"s1",
		"transport":{"name":"http-streamable","properties":{"headers":{"Accept":"application/json"}}}}`, 2))
	for _, mode := range []OutputValidation{ValidationStrict, ValidationOff} {
		b.Run(string(mode), func(b *testing.B) {
			a, _ := testAppWith(b, &Options{Stderr: io.Discard, Stdout: io.Discard, OutputValidation: mode, ScriptRoot: b.TempDir()})
			h := a.Handler()
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/greet", bytes.NewReader(payload))
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatal(w.Body.String())
				}
			}
		})
	}
}
