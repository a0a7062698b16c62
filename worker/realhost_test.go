package worker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/metadata"
	"github.com/funcmcp/funcmcp/worker"
)

// The tests in this file drive the worker as the Azure Functions host does,
// with no funcmcp host in between: POST /{function} with the tool
// invocation context JSON-encoded as a string under Data.context, and the
// reply's ReturnValue read as the host reads it (a JSON string holding the
// result envelope). The Functions host never checks a result, so whatever
// these tests see is what an MCP client would get under it.

const countSchema = `{"type":"object","properties":{"count":{"type":"integer"}},"required":["count"]}`

type countOut struct {
	Count int `json:"count"`
}

// png is a tiny image block payload; the kinds check reads only mimeType.
var png = []byte("\x89PNG\r\n\x1a\n")

// outputApp has one tool per behaviour under test.
func outputApp(opts *worker.Options) *worker.App {
	a := worker.New(opts)
	broken := func(context.Context, *worker.ToolContext) (*worker.Result, error) {
		return &worker.Result{StructuredContent: map[string]any{"count": "three"}}, nil
	}
	a.ConfigureMcpTool("count_default").WithOutputSchema(countSchema).Handle(broken)
	a.ConfigureMcpTool("count_strict").WithOutputSchema(countSchema).WithOutputValidation(worker.ValidationStrict).Handle(broken)
	a.ConfigureMcpTool("count_warn").WithOutputSchema(countSchema).WithOutputValidation(worker.ValidationWarn).Handle(broken)
	a.ConfigureMcpTool("count_off").WithOutputSchema(countSchema).WithOutputValidation(worker.ValidationOff).Handle(broken)
	a.ConfigureMcpTool("count_text_only").WithOutputSchema(countSchema).
		Handle(func(context.Context, *worker.ToolContext) (*worker.Result, error) { return worker.TextResult("3"), nil })

	// Typed tools: a summary text beside the typed output.
	summarized := func(context.Context, *worker.ToolContext, struct{}) (*worker.Result, countOut, error) {
		return worker.TextResult("three things"), countOut{Count: 3}, nil
	}
	worker.AddTool(a, "copy_default", summarized)
	worker.AddTool(a, "copy_json", summarized).WithTextCopy(worker.TextCopyJSON)
	worker.AddTool(a, "copy_none", summarized).WithTextCopy(worker.TextCopyNone)
	worker.AddTool(a, "copy_summary", summarized).WithTextCopy(worker.TextCopySummary)
	worker.AddTool(a, "copy_summary_without_text", func(context.Context, *worker.ToolContext, struct{}) (*worker.Result, countOut, error) {
		return nil, countOut{Count: 3}, nil
	}).WithTextCopy(worker.TextCopySummary)
	worker.AddTool(a, "typed_error_nil_out", func(context.Context, *worker.ToolContext, struct{}) (*worker.Result, *countOut, error) {
		return worker.ErrorResultf("nothing to count in %q", "here"), nil, nil
	})

	// Content kinds.
	chart := func(blocks ...worker.Content) worker.ToolHandler {
		return func(context.Context, *worker.ToolContext) (*worker.Result, error) {
			return &worker.Result{Content: blocks}, nil
		}
	}
	image, caption := worker.Image(png, "image/png"), worker.Text("A chart.")
	a.ConfigureMcpTool("kinds_ok").WithContentKinds("image/png", "text/plain").Handle(chart(image, caption))
	a.ConfigureMcpTool("kinds_family").WithContentKinds("image/*", "text/plain").Handle(chart(image, caption))
	a.ConfigureMcpTool("kinds_missing").WithContentKinds("image/png", "text/plain").Handle(chart(image))
	a.ConfigureMcpTool("kinds_undeclared").WithContentKinds("image/png", "text/plain").
		Handle(chart(image, caption, worker.Audio([]byte("RIFF"), "audio/wav")))
	a.ConfigureMcpTool("kinds_undeclared_warn").WithContentKinds("image/png").WithOutputValidation(worker.ValidationWarn).
		Handle(chart(image, caption))
	worker.AddTool(a, "kinds_structured", func(context.Context, *worker.ToolContext, struct{}) (*worker.Result, countOut, error) {
		return &worker.Result{Content: []worker.Content{image}}, countOut{Count: 1}, nil
	}).WithContentKinds("application/json", "image/png")
	return a
}

// serve runs the app with Serve on 127.0.0.1 and returns its base URL.
func serve(t *testing.T, a *worker.App) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Serve(ctx, l) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return")
		}
	})
	return "http://" + l.Addr().String()
}

// realHostReply is what the Functions host gets back from one invocation.
type realHostReply struct {
	envelope metadata.ToolResult
	result   *metadata.CallToolResult // as the host decodes the envelope
	logs     []string
}

// invokeLikeRealHost posts one tool call as the Functions host does and
// decodes the reply as it does (binding.DecodeReturnValue models its
// ToolReturnValueBinder; the host never validates).
func invokeLikeRealHost(t *testing.T, base, function string) realHostReply {
	t.Helper()
	out := testutil.InvokeAsFunctionsHost(t, base, function, `{}`)
	var envelopeText string
	require.NoError(t, json.Unmarshal(out.ReturnValue, &envelopeText), "ReturnValue must be a JSON string")
	var r realHostReply
	require.NoError(t, json.Unmarshal([]byte(envelopeText), &r.envelope))
	d, err := binding.DecodeReturnValue(out.ReturnValue, true)
	require.NoError(t, err)
	r.result, r.logs = d.Result, out.Logs
	return r
}

// texts returns the text of every text block, and the kinds of the others.
func texts(t *testing.T, res *metadata.CallToolResult) []string {
	t.Helper()
	var out []string
	for _, b := range res.Content {
		var block struct{ Type, Text, MimeType string }
		require.NoError(t, json.Unmarshal(b, &block))
		if block.Type == "text" {
			out = append(out, block.Text)
		} else {
			out = append(out, block.Type+" "+block.MimeType)
		}
	}
	return out
}

func TestUnderTheRealHostValidationModes(t *testing.T) {
	base := serve(t, outputApp(&worker.Options{Stderr: io.Discard, ScriptRoot: t.TempDir()}))
	const problem = "Output of tool '%s' does not match its output schema: at '/count' (/properties/count/type): got string, want integer"
	for _, tc := range []struct {
		function  string
		isError   bool
		text      []string
		logged    bool
		validated bool
	}{
		{function: "count_default", isError: true, text: []string{fmt.Sprintf(problem, "count_default")}, logged: true},
		{function: "count_strict", isError: true, text: []string{fmt.Sprintf(problem, "count_strict")}, logged: true},
		{function: "count_warn", text: []string{`{"count":"three"}`}, logged: true},
		{function: "count_off", text: []string{`{"count":"three"}`}},
		{function: "count_text_only", isError: true, logged: true,
			text: []string{"Output of tool 'count_text_only' does not match its output schema: " + binding.ProblemNoStructuredContent}},
		{function: "copy_default", text: []string{"three things", `{"count":3}`}, validated: true},
	} {
		t.Run(tc.function, func(t *testing.T) {
			r := invokeLikeRealHost(t, base, tc.function)
			assert.Equal(t, tc.isError, r.result.IsError)
			assert.Equal(t, tc.text, texts(t, r.result))
			if tc.isError {
				assert.Nil(t, r.result.StructuredContent, "a strict failure sends no structuredContent")
			}
			logged := strings.Join(r.logs, "\n")
			if tc.logged {
				assert.Contains(t, logged, "does not match its output schema", "the problem is in the invocation's Logs")
			} else {
				assert.NotContains(t, logged, "does not match")
			}
			if tc.function == "count_warn" {
				assert.Contains(t, logged, "(delivered as is: outputValidation is warn)")
			}
			assert.Equal(t, tc.validated, r.envelope.Checked != "", "the output check travels only with a validated result")
		})
	}
}

func TestUnderTheRealHostTextCopy(t *testing.T) {
	base := serve(t, outputApp(&worker.Options{Stderr: io.Discard, ScriptRoot: t.TempDir()}))
	for _, tc := range []struct {
		function string
		text     []string
	}{
		{"copy_default", []string{"three things", `{"count":3}`}},
		{"copy_json", []string{"three things", `{"count":3}`}},
		{"copy_none", []string{"three things"}},
		{"copy_summary", []string{"three things"}},
		{"copy_summary_without_text", []string{`{"count":3}`}},
	} {
		t.Run(tc.function, func(t *testing.T) {
			r := invokeLikeRealHost(t, base, tc.function)
			require.False(t, r.result.IsError, "%s", texts(t, r.result))
			assert.JSONEq(t, `{"count":3}`, string(r.result.StructuredContent))
			assert.Equal(t, tc.text, texts(t, r.result))
		})
	}
	t.Run("a typed error with a nil *Out", func(t *testing.T) {
		r := invokeLikeRealHost(t, base, "typed_error_nil_out")
		assert.True(t, r.result.IsError)
		assert.Nil(t, r.result.StructuredContent)
		assert.Equal(t, []string{`nothing to count in "here"`}, texts(t, r.result))
	})
}

func TestUnderTheRealHostContentKinds(t *testing.T) {
	base := serve(t, outputApp(&worker.Options{Stderr: io.Discard, ScriptRoot: t.TempDir()}))
	for _, tc := range []struct {
		function string
		isError  bool
		text     []string
	}{
		{"kinds_ok", false, []string{"image image/png", "A chart."}},
		{"kinds_family", false, []string{"image image/png", "A chart."}},
		{"kinds_missing", true, []string{"Output of tool 'kinds_missing' does not match the declared content kinds: declared kind text/plain is missing"}},
		{"kinds_undeclared", true, []string{"Output of tool 'kinds_undeclared' does not match the declared content kinds: kind audio/wav is not declared"}},
		{"kinds_undeclared_warn", false, []string{"image image/png", "A chart."}},
		{"kinds_structured", false, []string{"image image/png", `{"count":1}`}},
	} {
		t.Run(tc.function, func(t *testing.T) {
			r := invokeLikeRealHost(t, base, tc.function)
			assert.Equal(t, tc.isError, r.result.IsError)
			assert.Equal(t, tc.text, texts(t, r.result))
		})
	}
}

// TestUnderTheRealHostHostJSONSettings shows the app reading its output
// settings from host.json, as funchost does, and the app's and the tools'
// own settings winning over it.
func TestUnderTheRealHostHostJSONSettings(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "host.json"),
		[]byte(`{"version":"2.0","Extensions":{"MCP":{"OutputValidation":"Warn","textCopy":"none"}}}`), 0o644))

	base := serve(t, outputApp(&worker.Options{Stderr: io.Discard, ScriptRoot: root}))
	r := invokeLikeRealHost(t, base, "count_default")
	assert.False(t, r.result.IsError, "host.json says warn")
	assert.Empty(t, r.result.Content, "host.json says no text copy")
	assert.Contains(t, strings.Join(r.logs, "\n"), "(delivered as is: outputValidation is warn)")
	r = invokeLikeRealHost(t, base, "count_strict")
	assert.True(t, r.result.IsError, "the tool's own setting wins")
	r = invokeLikeRealHost(t, base, "copy_json")
	assert.Equal(t, []string{"three things", `{"count":3}`}, texts(t, r.result), "the tool's own setting wins")

	base = serve(t, outputApp(&worker.Options{Stderr: io.Discard, ScriptRoot: root, OutputValidation: worker.ValidationStrict}))
	r = invokeLikeRealHost(t, base, "count_default")
	assert.True(t, r.result.IsError, "the app's option wins over host.json")

	t.Run("a bad host.json value stops Serve", func(t *testing.T) {
		bad := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(bad, "host.json"), []byte(`{"extensions":{"mcp":{"outputValidation":"sometimes"}}}`), 0o644))
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		err = outputApp(&worker.Options{Stderr: io.Discard, ScriptRoot: bad}).Serve(context.Background(), l)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "host.json")
		assert.Contains(t, err.Error(), `extensions.mcp.outputValidation: "sometimes" is not one of strict, warn, off`)
	})
}

// TestOutputSettingsAreWrittenForTheHost shows the per-tool settings and
// content kinds in function.json (keys the Functions host ignores), so that
// funchost applies the same rules.
func TestOutputSettingsAreWrittenForTheHost(t *testing.T) {
	fns, err := outputApp(&worker.Options{TextCopy: worker.TextCopySummary}).Functions()
	require.NoError(t, err)
	byName := map[string]*metadata.Binding{}
	for _, f := range fns {
		byName[f.Name] = f.Bindings[0]
	}
	str := func(fn, key string) string {
		s, _ := byName[fn].LookupString(key)
		return s
	}
	assert.Equal(t, "warn", str("count_warn", metadata.KeyOutputValidation))
	assert.Equal(t, "", str("count_default", metadata.KeyOutputValidation), "nothing set: the host's own setting applies")
	assert.Equal(t, "none", str("copy_none", metadata.KeyTextCopy))
	assert.Equal(t, "summary", str("copy_default", metadata.KeyTextCopy), "the app's option is written for each tool")
	assert.Equal(t, `["image/png","text/plain"]`, str("kinds_ok", metadata.KeyContentKinds))
	assert.Equal(t, "", str("count_default", metadata.KeyContentKinds))
}

func TestOutputSettingErrors(t *testing.T) {
	a := worker.New(nil)
	noop := func(context.Context, *worker.ToolContext) (*worker.Result, error) { return nil, nil }
	a.ConfigureMcpTool("a").WithOutputValidation("sometimes").Handle(noop)
	a.ConfigureMcpTool("b").WithTextCopy("twice").Handle(noop)
	a.ConfigureMcpTool("c").WithContentKinds("png").Handle(noop)
	a.ConfigureMcpTool("d").WithContentKinds("image/png; q=1").Handle(noop)
	err := a.Build()
	require.Error(t, err)
	assert.ErrorIs(t, err, worker.ErrOutputSetting)
	assert.ErrorIs(t, err, worker.ErrContentKind)
	var buf bytes.Buffer
	buf.WriteString(err.Error())
	for _, want := range []string{`tool "a"`, `"sometimes"`, `tool "b"`, `"twice"`, `tool "c"`, `"png"`, `tool "d"`} {
		assert.Contains(t, buf.String(), want)
	}
}

// TestOutputIssueIsAWarning: a result that breaks its output rules is the
// app's bug, answered with an isError result (strict) or delivered as is
// (warn); the worker goes on serving. Its line is a warning in both modes,
// naming the function, the tool and the invocation, and the reply carries
// the same message for funchost, which logs it at the same level.
func TestOutputIssueIsAWarning(t *testing.T) {
	var logs testutil.SyncBuffer
	base := serve(t, outputApp(&worker.Options{Stderr: io.Discard, ScriptRoot: t.TempDir(),
		Logger: slog.New(slog.NewTextHandler(&logs, nil))}))
	for _, function := range []string{"count_strict", "count_warn", "kinds_undeclared_warn"} {
		t.Run(function, func(t *testing.T) {
			r := invokeLikeRealHost(t, base, function)
			require.NotEmpty(t, r.envelope.OutputIssue, "the reply names the output issue")
			var line string
			for l := range strings.Lines(logs.String()) {
				if strings.Contains(l, "function="+function+" ") {
					line = l
				}
			}
			assert.Contains(t, line, "level=WARN msg=")
			assert.Contains(t, line, fmt.Sprintf("function=%s tool=%s invocationId=", function, function))
			assert.Contains(t, line, strings.TrimSuffix(strings.TrimPrefix(fmt.Sprintf("%q", r.envelope.OutputIssue), `"`), `"`))
			assert.Contains(t, r.logs, r.envelope.OutputIssue, "the Functions host logs the same line")
		})
	}
	assert.NotContains(t, logs.String(), "level=ERROR")
}
