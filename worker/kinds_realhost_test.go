package worker_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/metadata"
	"github.com/funcmcp/funcmcp/worker"
)

// The tests in this file drive the new kinds as the Azure Functions host
// does: POST /{function} with the invocation context JSON-encoded as a
// string under Data.context, and the reply's ReturnValue read as the
// extension's binders read it (binding's decoders model them).

var pngBytes = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")

// tripArgs is the input of the typed prompt.
type tripArgs struct {
	City string  `json:"city" jsonschema:"Where to go"`
	Days *string `json:"days,omitempty" description:"How many days"`
}

// kindsApp has one resource, template, prompt and app of each behaviour.
func kindsApp(opts *worker.Options) *worker.App {
	a := worker.New(opts)
	a.ConfigureMcpResource("test://static-text").WithName("static-text").WithMimeType("text/plain").
		WithDescription("A static text.").
		Handle(func(context.Context, *worker.ResourceContext) (*worker.ResourceResult, error) {
			return worker.TextResource("This is <static> & \"quoted\" text.\n"), nil
		})
	a.ConfigureMcpResource("test://static-binary").WithName("static-binary").WithMimeType("image/png").
		Handle(func(context.Context, *worker.ResourceContext) (*worker.ResourceResult, error) {
			return worker.BlobResource(pngBytes), nil
		})
	a.ConfigureMcpResource("test://items/{id}/data").WithName("items").WithMimeType("application/json").
		WithCompletion("id", "123", "124", "200").
		Handle(func(_ context.Context, rc *worker.ResourceContext) (*worker.ResourceResult, error) {
			if rc.Variable("id") == "404" {
				return nil, fmt.Errorf("item %s: %w", rc.Variable("id"), worker.ErrResourceNotFound)
			}
			rc.Logf("reading item %s", rc.Variable("id"))
			return &worker.ResourceResult{Text: fmt.Sprintf(`{"id":%q}`, rc.Variable("id")), Meta: map[string]any{"v": 1}}, nil
		})
	a.ConfigureMcpResource("test://empty").WithName("empty").
		Handle(func(context.Context, *worker.ResourceContext) (*worker.ResourceResult, error) { return nil, nil })
	a.ConfigureMcpResource("test://panics").WithName("panics").
		Handle(func(context.Context, *worker.ResourceContext) (*worker.ResourceResult, error) { panic("boom") })
	a.ConfigureMcpResource("test://bad-mime").WithName("bad-mime").
		Handle(func(context.Context, *worker.ResourceContext) (*worker.ResourceResult, error) {
			return &worker.ResourceResult{Text: "x", MimeType: "nonsense"}, nil
		})

	a.ConfigureMcpPrompt("simple").WithDescription("A simple prompt.").
		Handle(func(context.Context, *worker.PromptContext) (*worker.PromptResult, error) {
			return worker.TextPromptResult("This is a simple prompt."), nil
		})
	a.ConfigureMcpPrompt("review").WithDescription("Reviews code.").
		WithArgument("code", "The code.", worker.Required).
		WithArgument("style", "A style.", worker.Optional).
		WithCompletion("style", "brief", "Blunt", "detailed").
		WithCompletionFunc("code", func(_ context.Context, cc *worker.CompletionContext) ([]string, error) {
			if cc.Value == "fail" {
				return nil, fmt.Errorf("no: %w", worker.ErrInvalidParams)
			}
			return []string{cc.Value + "1", cc.Value + "2", "style=" + cc.Arguments["style"]}, nil
		}).
		Handle(func(_ context.Context, pc *worker.PromptContext) (*worker.PromptResult, error) {
			code, _ := pc.Argument("code")
			style, ok := pc.Argument("style")
			if !ok {
				style = "(none)"
			}
			return &worker.PromptResult{
				Description: "A review",
				Messages: []worker.PromptMessage{
					worker.UserMessage(worker.EmbeddedResource("test://code", "text/plain", code)),
					worker.UserMessage(worker.Image(pngBytes, "image/png")),
					worker.AssistantMessage(worker.Text("Style: " + style)),
				},
				Meta: map[string]any{"k": "v"},
			}, nil
		})
	worker.AddPrompt(a, "trip", func(_ context.Context, _ *worker.PromptContext, in tripArgs) (*worker.PromptResult, error) {
		days := "?"
		if in.Days != nil {
			days = *in.Days
		}
		return worker.TextPromptResult(fmt.Sprintf("%s for %s days", in.City, days)), nil
	}).WithTitle("Plan a trip")
	a.ConfigureMcpPrompt("broken").
		Handle(func(context.Context, *worker.PromptContext) (*worker.PromptResult, error) {
			return &worker.PromptResult{Messages: []worker.PromptMessage{{Role: "system", Content: worker.Text("x")}}}, nil
		})
	a.ConfigureMcpPrompt("nothing").
		Handle(func(context.Context, *worker.PromptContext) (*worker.PromptResult, error) {
			return nil, errors.New("out of ideas")
		})

	views := fstest.MapFS{"view/chart.html": {Data: []byte("<!doctype html><p>chart & co</p>")}}
	a.ConfigureMcpTool("chart").WithDescription("A chart.").
		AsMcpApp(func(app *worker.AppBuilder) {
			app.WithView(worker.ViewFromFS(views, "view/chart.html")).WithTitle("Chart").WithBorder(true).
				WithDomain("chart.example.com").
				WithCSP(func(c *worker.CSPBuilder) {
					c.ConnectTo("https://api.example.com").LoadResourcesFrom("https://cdn.example.com")
				}).
				WithPermissions(worker.PermissionClipboardWrite)
			app.WithVisibility(worker.VisibilityApp)
		}).
		Handle(func(context.Context, *worker.ToolContext) (*worker.Result, error) {
			return worker.TextResult("ok"), nil
		})
	a.ConfigureMcpTool("plain_app").
		AsMcpApp(func(app *worker.AppBuilder) { app.WithView(worker.ViewFromHTML("<p>plain</p>")) }).
		Handle(func(context.Context, *worker.ToolContext) (*worker.Result, error) {
			return worker.TextResult("ok"), nil
		})
	return a
}

// kindReply is one reply of the worker to a request posted as the
// Functions host posts it.
type kindReply struct {
	status  int
	body    []byte
	reply   metadata.InvocationResponse // when 200
	failure metadata.FailureReply       // when 500
}

// postKind posts a trigger value to /{function} the way the Functions host
// posts an invocation: the context JSON-encoded depth times (at least once)
// under Data.context. header adds request headers (funchost's).
func postKind(t *testing.T, base, function, context string, depth int, header map[string]string) kindReply {
	t.Helper()
	value := []byte(context)
	for range depth {
		var err error
		value, err = json.Marshal(string(value))
		require.NoError(t, err)
	}
	body := fmt.Sprintf(`{"Data":{"context":%s},"Metadata":{"sys":{"MethodName":%q}}}`, value, function)
	req, err := http.NewRequest(http.MethodPost, base+"/"+function, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(metadata.HeaderInvocationID, "6f9619ff-8b86-d011-b42d-00c04fc964ff")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{Timeout: testutil.InvokeTimeout}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	r := kindReply{status: resp.StatusCode, body: data}
	switch resp.StatusCode {
	case http.StatusOK:
		require.NoError(t, json.Unmarshal(data, &r.reply), "%s", data)
	case http.StatusInternalServerError:
		require.NoError(t, json.Unmarshal(data, &r.failure), "%s", data)
	}
	return r
}

// returnValueText is the envelope text a ReturnValue string holds.
func returnValueText(t *testing.T, r kindReply) string {
	t.Helper()
	require.Equal(t, http.StatusOK, r.status, "%s", r.body)
	var s string
	require.NoError(t, json.Unmarshal(r.reply.ReturnValue, &s), "ReturnValue must be a JSON string: %s", r.reply.ReturnValue)
	return s
}

// loaded reads the emitted functions back as the host does.
func loaded(t *testing.T, a *worker.App) (map[string]*binding.Resource, map[string]*binding.Prompt) {
	t.Helper()
	fns, err := a.Functions()
	require.NoError(t, err)
	res, prompts := map[string]*binding.Resource{}, map[string]*binding.Prompt{}
	for _, f := range fns {
		if ts := f.ResourceTriggers(); len(ts) == 1 {
			r, err := binding.LoadResource(f, ts[0], "")
			require.NoError(t, err)
			res[f.Name] = r
		}
		if ts := f.PromptTriggers(); len(ts) == 1 {
			p, err := binding.LoadPrompt(f, ts[0], "")
			require.NoError(t, err)
			prompts[f.Name] = p
		}
	}
	return res, prompts
}

func TestUnderTheRealHostResources(t *testing.T) {
	app := kindsApp(&worker.Options{Stderr: io.Discard, ScriptRoot: t.TempDir()})
	base := serve(t, app)
	resources, _ := loaded(t, app)
	b64 := base64.StdEncoding.EncodeToString(pngBytes)
	for _, tc := range []struct {
		name, function, uri string
		envelope            string // the ReturnValue's text, byte for byte
		read                string // the ReadResourceResult the extension's binder makes of it
		logs                []string
	}{
		{name: "text", function: "test_static_text", uri: "test://static-text",
			envelope: `{"content":"{\"uri\":\"test://static-text\",\"mimeType\":\"text/plain\",\"text\":\"This is <static> & \\\"quoted\\\" text.\\n\"}"}`,
			read:     `{"contents":[{"uri":"test://static-text","mimeType":"text/plain","text":"This is <static> & \"quoted\" text.\n"}]}`},
		{name: "binary", function: "test_static_binary", uri: "test://static-binary",
			envelope: `{"content":"{\"uri\":\"test://static-binary\",\"mimeType\":\"image/png\",\"blob\":\"` + b64 + `\"}"}`,
			read:     `{"contents":[{"uri":"test://static-binary","mimeType":"image/png","blob":"` + b64 + `"}]}`},
		{name: "a static URI in another case", function: "test_static_text", uri: "TEST://STATIC-TEXT",
			envelope: `{"content":"{\"uri\":\"TEST://STATIC-TEXT\",\"mimeType\":\"text/plain\",\"text\":\"This is <static> & \\\"quoted\\\" text.\\n\"}"}`,
			read:     `{"contents":[{"uri":"TEST://STATIC-TEXT","mimeType":"text/plain","text":"This is <static> & \"quoted\" text.\n"}]}`},
		{name: "template", function: "test_items_id_data", uri: "test://items/123/data",
			envelope: `{"content":"{\"uri\":\"test://items/123/data\",\"mimeType\":\"application/json\",\"text\":\"{\\\"id\\\":\\\"123\\\"}\",\"_meta\":{\"v\":1}}"}`,
			read:     `{"contents":[{"uri":"test://items/123/data","mimeType":"application/json","text":"{\"id\":\"123\"}","_meta":{"v":1}}]}`,
			logs:     []string{"reading item 123"}},
	} {
		for depth := 1; depth <= 2; depth++ {
			t.Run(fmt.Sprintf("%s, context encoded %d times", tc.name, depth), func(t *testing.T) {
				r := postKind(t, base, tc.function, fmt.Sprintf(`{"uri":%q,"sessionid":"s-1","transport":{"name":"http-streamable"}}`, tc.uri), depth, nil)
				env := returnValueText(t, r)
				assert.Equal(t, tc.envelope, env)
				res, err := resources[tc.function].DecodeReturnValue(r.reply.ReturnValue, tc.uri)
				require.NoError(t, err)
				data, err := metadata.Marshal(res)
				require.NoError(t, err)
				assert.Equal(t, tc.read, string(data))
				assert.Equal(t, tc.logs, nilIfEmpty(r.reply.Logs))
			})
		}
	}

	t.Run("no contents", func(t *testing.T) {
		r := postKind(t, base, "test_empty", `{"uri":"test://empty"}`, 1, nil)
		require.Equal(t, http.StatusOK, r.status)
		assert.Equal(t, "null", string(r.reply.ReturnValue), "the binder reads null as no contents")
	})
	for _, tc := range []struct {
		name, function, context string
		code                    int
		message                 string
	}{
		{"not found", "test_items_id_data", `{"uri":"test://items/404/data"}`, metadata.CodeResourceNotFound, "item 404: resource not found"},
		{"a URI the template does not match", "test_items_id_data", `{"uri":"test://items/1/2/data"}`, metadata.CodeResourceNotFound, "is not served by the template"},
		{"a panic", "test_panics", `{"uri":"test://panics"}`, metadata.CodeInternalError, "resource test://panics panicked: boom"},
		{"a bad MIME type", "test_bad_mime", `{"uri":"test://bad-mime"}`, metadata.CodeInternalError, `"nonsense" is not a MIME type`},
		{"no uri", "test_empty", `{"sessionid":"s"}`, metadata.CodeInvalidParams, "the uri is missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := postKind(t, base, tc.function, tc.context, 1, nil)
			require.Equal(t, http.StatusInternalServerError, r.status, "a failed read fails the invocation: %s", r.body)
			assert.Equal(t, tc.code, r.failure.Code)
			assert.Contains(t, r.failure.Error, tc.message)
		})
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestUnderTheRealHostPrompts(t *testing.T) {
	app := kindsApp(&worker.Options{Stderr: io.Discard, ScriptRoot: t.TempDir()})
	base := serve(t, app)
	_, prompts := loaded(t, app)
	pngB64 := base64.StdEncoding.EncodeToString(pngBytes)
	for _, tc := range []struct {
		name, function, context string
		envelope                string // the ReturnValue's text, byte for byte
		result                  string // the GetPromptResult the extension's binder makes of it
	}{
		{name: "simple", function: "simple", context: `{"name":"simple"}`,
			envelope: `{"content":"{\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"This is a simple prompt.\"}}]}","type":"get_prompt_result"}`,
			result:   `{"messages":[{"role":"user","content":{"type":"text","text":"This is a simple prompt."}}]}`},
		{name: "arguments, resource and image", function: "review", context: `{"name":"review","arguments":{"code":"x := 1","style":"brief"},"sessionid":"s"}`,
			envelope: `{"content":"{\"description\":\"A review\",\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"resource\",\"resource\":{\"uri\":\"test://code\",\"mimeType\":\"text/plain\",\"text\":\"x := 1\"}}},{\"role\":\"user\",\"content\":{\"type\":\"image\",\"data\":\"` + pngB64 + `\",\"mimeType\":\"image/png\"}},{\"role\":\"assistant\",\"content\":{\"type\":\"text\",\"text\":\"Style: brief\"}}],\"_meta\":{\"k\":\"v\"}}","type":"get_prompt_result"}`,
			result:   `{"description":"A review","messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"test://code","mimeType":"text/plain","text":"x := 1"}}},{"role":"user","content":{"type":"image","data":"` + pngB64 + `","mimeType":"image/png"}},{"role":"assistant","content":{"type":"text","text":"Style: brief"}}],"_meta":{"k":"v"}}`},
		{name: "a non-string argument", function: "review", context: `{"name":"review","arguments":{"code":42}}`,
			result: `{"description":"A review","messages":[{"role":"user","content":{"type":"resource","resource":{"uri":"test://code","mimeType":"text/plain","text":"42"}}},{"role":"user","content":{"type":"image","data":"` + pngB64 + `","mimeType":"image/png"}},{"role":"assistant","content":{"type":"text","text":"Style: (none)"}}],"_meta":{"k":"v"}}`},
		{name: "typed", function: "trip", context: `{"name":"trip","arguments":{"city":"Oslo","days":"3"}}`,
			result: `{"messages":[{"role":"user","content":{"type":"text","text":"Oslo for 3 days"}}]}`},
		{name: "typed, optional left out", function: "trip", context: `{"name":"trip","arguments":{"city":"Oslo","days":null}}`,
			result: `{"messages":[{"role":"user","content":{"type":"text","text":"Oslo for ? days"}}]}`},
	} {
		for depth := 1; depth <= 2; depth++ {
			t.Run(fmt.Sprintf("%s, context encoded %d times", tc.name, depth), func(t *testing.T) {
				r := postKind(t, base, tc.function, tc.context, depth, nil)
				env := returnValueText(t, r)
				if tc.envelope != "" {
					assert.Equal(t, tc.envelope, env)
				}
				res, err := prompts[tc.function].DecodeReturnValue(r.reply.ReturnValue)
				require.NoError(t, err)
				data, err := metadata.Marshal(res)
				require.NoError(t, err)
				assert.Equal(t, tc.result, string(data))
			})
		}
	}
	for _, tc := range []struct {
		name, function, context string
		code                    int
		message                 string
	}{
		{"a missing required argument", "review", `{"name":"review","arguments":{"style":"x"}}`, metadata.CodeInvalidParams,
			"One or more required prompt arguments are missing values. Please provide: code"},
		{"a null required argument", "trip", `{"name":"trip","arguments":{"city":null}}`, metadata.CodeInvalidParams, "Please provide: city"},
		{"a handler error", "nothing", `{"name":"nothing"}`, metadata.CodeInternalError, "out of ideas"},
		{"an invalid result", "broken", `{"name":"broken"}`, metadata.CodeInternalError, `prompt broken returned an invalid result: decoding the prompt result: message 0: role "system"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := postKind(t, base, tc.function, tc.context, 1, nil)
			require.Equal(t, http.StatusInternalServerError, r.status, "%s", r.body)
			assert.Equal(t, tc.code, r.failure.Code)
			assert.Contains(t, r.failure.Error, tc.message)
		})
	}
}

func TestUnderTheRealHostAppView(t *testing.T) {
	app := kindsApp(&worker.Options{Stderr: io.Discard, ScriptRoot: t.TempDir()})
	base := serve(t, app)
	resources, _ := loaded(t, app)

	r := postKind(t, base, "functions--mcpapp-chart", `{"uri":"ui://chart/view","sessionid":"s"}`, 1, nil)
	assert.Equal(t, `{"content":"{\"uri\":\"ui://chart/view\",\"mimeType\":\"text/html;profile=mcp-app\",\"text\":\"<!doctype html><p>chart & co</p>\",\"_meta\":{\"ui\":{\"csp\":{\"connectDomains\":[\"https://api.example.com\"],\"resourceDomains\":[\"https://cdn.example.com\"]},\"permissions\":{\"clipboardWrite\":{}},\"prefersBorder\":true,\"domain\":\"chart.example.com\"}}}"}`,
		returnValueText(t, r), "the McpAppResourceResult the .NET worker's middleware returns")
	res, err := resources["functions--mcpapp-chart"].DecodeReturnValue(r.reply.ReturnValue, "ui://chart/view")
	require.NoError(t, err)
	data, _ := metadata.Marshal(res)
	assert.JSONEq(t, `{"contents":[{"uri":"ui://chart/view","mimeType":"text/html;profile=mcp-app","text":"<!doctype html><p>chart & co</p>",
		"_meta":{"ui":{"csp":{"connectDomains":["https://api.example.com"],"resourceDomains":["https://cdn.example.com"]},"permissions":{"clipboardWrite":{}},"prefersBorder":true,"domain":"chart.example.com"}}}]}`, string(data))

	r = postKind(t, base, "functions--mcpapp-plain_app", `{"uri":"ui://plain_app/view"}`, 2, nil)
	assert.Equal(t, `{"content":"{\"uri\":\"ui://plain_app/view\",\"mimeType\":\"text/html;profile=mcp-app\",\"text\":\"<p>plain</p>\"}"}`,
		returnValueText(t, r), "no _meta when the view has nothing to say")

	// The tool is still a tool, with its UI in _meta.
	out := testutil.InvokeAsFunctionsHost(t, base, "chart", `{}`)
	d, err := binding.DecodeReturnValue(out.ReturnValue, true)
	require.NoError(t, err)
	assert.Equal(t, []string{"ok"}, texts(t, d.Result))
}

// TestCompletionRequests posts completion requests as funchost does: the
// funcmcp method header the Functions host never sends.
func TestCompletionRequests(t *testing.T) {
	base := serve(t, kindsApp(&worker.Options{Stderr: io.Discard, ScriptRoot: t.TempDir()}))
	complete := map[string]string{metadata.HeaderMethod: metadata.MethodComplete}
	for _, tc := range []struct {
		name, function, context, want string
	}{
		{"fixed list", "review", `{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"style","value":"b"}}`,
			`{"completion":{"values":["brief","Blunt"],"total":2,"hasMore":false}}`},
		{"worker function", "review", `{"ref":{"type":"ref/prompt","name":"Review"},"argument":{"name":"code","value":"fn"},"context":{"arguments":{"style":"brief"}}}`,
			`{"completion":{"values":["fn1","fn2","style=brief"],"total":3,"hasMore":false}}`},
		{"an argument without completions", "trip", `{"ref":{"type":"ref/prompt","name":"trip"},"argument":{"name":"city","value":"O"}}`,
			`{"completion":{"values":[],"hasMore":false}}`},
		{"template variable", "test_items_id_data", `{"ref":{"type":"ref/resource","uri":"test://items/{id}/data"},"argument":{"name":"id","value":"12"}}`,
			`{"completion":{"values":["123","124"],"total":2,"hasMore":false}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := postKind(t, base, tc.function, tc.context, 1, complete)
			assert.Equal(t, tc.want, returnValueText(t, r))
			res, err := binding.DecodeCompletionReturnValue(r.reply.ReturnValue)
			require.NoError(t, err, "the host reads it back")
			assert.NotNil(t, res.Completion.Values)
		})
	}
	t.Run("a wrong ref", func(t *testing.T) {
		r := postKind(t, base, "review", `{"ref":{"type":"ref/prompt","name":"trip"},"argument":{"name":"code","value":""}}`, 1, complete)
		require.Equal(t, http.StatusInternalServerError, r.status)
		assert.Equal(t, metadata.CodeInvalidParams, r.failure.Code)
	})
	t.Run("a failing function", func(t *testing.T) {
		r := postKind(t, base, "review", `{"ref":{"type":"ref/prompt","name":"review"},"argument":{"name":"code","value":"fail"}}`, 1, complete)
		require.Equal(t, http.StatusInternalServerError, r.status)
		assert.Equal(t, metadata.CodeInvalidParams, r.failure.Code, "the function's error wraps ErrInvalidParams")
		assert.Contains(t, r.failure.Error, "no: invalid params")
	})
	t.Run("a tool", func(t *testing.T) {
		r := postKind(t, base, "chart", `{}`, 1, complete)
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, string(r.body), "is a tool")
	})
	t.Run("an unknown function", func(t *testing.T) {
		r := postKind(t, base, "nope", `{}`, 1, complete)
		assert.Equal(t, http.StatusNotFound, r.status)
	})
	t.Run("an unknown method", func(t *testing.T) {
		r := postKind(t, base, "review", `{}`, 1, map[string]string{metadata.HeaderMethod: "tools/call"})
		assert.Equal(t, http.StatusBadRequest, r.status)
		assert.Contains(t, string(r.body), `unknown method \"tools/call\"`)
	})
}

func TestKindRequestErrors(t *testing.T) {
	base := serve(t, kindsApp(&worker.Options{Stderr: io.Discard, ScriptRoot: t.TempDir(), MaxBodyBytes: 512}))
	post := func(function, body string) (int, string) {
		resp, err := http.Post(base+"/"+function, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(data)
	}
	status, body := post("simple", `{"Data":`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, body, "decoding the invocation request")
	status, body = post("simple", `{"Data":{"other":{}}}`)
	assert.Equal(t, http.StatusBadRequest, status)
	assert.Contains(t, body, `no \"context\" entry`)
	status, _ = post("simple", `{"Data":{"context":"`+strings.Repeat("x", 600)+`"}}`)
	assert.Equal(t, http.StatusRequestEntityTooLarge, status)
	status, body = post("simple", `{"Data":{"context":"[1]"}}`)
	assert.Equal(t, http.StatusInternalServerError, status)
	assert.Contains(t, body, "decoding prompt invocation context")
}
