package worker_test

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/worker"
)

func readText(context.Context, *worker.ResourceContext) (*worker.ResourceResult, error) {
	return worker.TextResource("x"), nil
}

func promptText(context.Context, *worker.PromptContext) (*worker.PromptResult, error) {
	return worker.TextPromptResult("x"), nil
}

func toolText(context.Context, *worker.ToolContext) (*worker.Result, error) {
	return worker.TextResult("x"), nil
}

// TestKindBuildErrors shows each configuration problem of a resource,
// template, prompt or MCP App reported by Build, as a *ConfigError naming
// it and the rule.
func TestKindBuildErrors(t *testing.T) {
	for _, tc := range []struct {
		name      string
		configure func(a *worker.App)
		is        error  // a rule the error matches, or nil
		as        any    // a pointer to an error type it holds, or nil
		message   string // part of its message
	}{
		{name: "resource without handler", configure: func(a *worker.App) { a.ConfigureMcpResource("test://a") },
			is: worker.ErrNoHandler, message: `resource "test://a" (function "test_a"): the resource has no handler: call Handle`},
		{name: "template without handler", configure: func(a *worker.App) { a.ConfigureMcpResource("test://a/{id}") },
			is: worker.ErrNoHandler, message: `resource template "test://a/{id}" (function "test_a_id"): the resource template has no handler`},
		{name: "two handlers", configure: func(a *worker.App) { a.ConfigureMcpResource("test://a").Handle(readText).Handle(readText) },
			is: worker.ErrTwoHandlers, message: `more than one handler (2 given): URI "test://a" is given a handler 2 times: each resource needs a URI of its own`},
		{name: "prompt name twice", configure: func(a *worker.App) {
			a.ConfigureMcpPrompt("review").Handle(promptText)
			a.ConfigureMcpPrompt("review").Handle(promptText)
		}, is: worker.ErrTwoHandlers, message: `prompt "review": the prompt has more than one handler (2 given): name "review" is given a handler 2 times: each prompt needs a name of its own`},
		{name: "nil handler", configure: func(a *worker.App) { a.ConfigureMcpResource("test://a").Handle(nil) },
			is: worker.ErrNoHandler, message: "Handle was given a nil handler"},
		{name: "relative URI", configure: func(a *worker.App) { a.ConfigureMcpResource("static-text").Handle(readText) },
			as: new(*binding.URIError), message: `resource "static-text" (function "static_text"): resource URI "static-text": it is not an absolute URI`},
		{name: "empty URI", configure: func(a *worker.App) { a.ConfigureMcpResource("").WithFunctionName("r").Handle(readText) },
			is: worker.ErrEmptyResourceURI, message: `resource "" (function "r"): the resource URI is empty`},
		{name: "blank URI", configure: func(a *worker.App) { a.ConfigureMcpResource(" ").WithFunctionName("r").Handle(readText) },
			as: new(*binding.LoadError), message: `uri is empty`},
		{name: "empty prompt name", configure: func(a *worker.App) { a.ConfigureMcpPrompt("").WithFunctionName("p").Handle(promptText) },
			is: worker.ErrEmptyPromptName, message: `prompt "" (function "p"): the prompt name is empty`},
		{name: "adjacent variables", configure: func(a *worker.App) { a.ConfigureMcpResource("test://{a}{b}").Handle(readText) },
			as: new(*binding.URIError), message: "template expressions must be separated"},
		{name: "colliding variables", configure: func(a *worker.App) { a.ConfigureMcpResource("test://{a-b}/{a_b}").Handle(readText) },
			as: new(*binding.URIError), message: "colliding variable names"},
		{name: "duplicate URIs", configure: func(a *worker.App) {
			a.ConfigureMcpResource("test://a").Handle(readText)
			a.ConfigureMcpResource("TEST://A").WithFunctionName("again").Handle(readText)
		}, as: new(*binding.DuplicateError), message: `resource "TEST://A" (function "again"): resource "TEST://A" is already registered by function "test_a"`},
		{name: "structurally identical templates", configure: func(a *worker.App) {
			a.ConfigureMcpResource("test://users/{id}").Handle(readText)
			a.ConfigureMcpResource("test://users/{name}").Handle(readText)
		}, as: new(*binding.DuplicateError), message: `equivalent URI pattern is already registered by function "test_users_id": existing "test://users/{id}", new "test://users/{name}"`},
		{name: "bad MIME type", configure: func(a *worker.App) { a.ConfigureMcpResource("test://a").WithMimeType("text").Handle(readText) },
			message: `mimeType: "text" is not a MIME type`},
		{name: "negative size", configure: func(a *worker.App) { a.ConfigureMcpResource("test://a").WithSize(-1).Handle(readText) },
			message: "size must be a whole number of bytes, at least 0"},
		{name: "resource icon", configure: func(a *worker.App) {
			a.ConfigureMcpResource("test://a").WithIcons(worker.Icon{Src: "file:///x.png"}).Handle(readText)
		}, message: "icons[0]: src \"file:///x.png\" must be an https:, http: or data: URI"},
		{name: "completion of a static resource", configure: func(a *worker.App) {
			a.ConfigureMcpResource("test://a").WithCompletion("id", "1").Handle(readText)
		}, message: "a static resource has no variables to complete"},
		{name: "completion of an unknown variable", configure: func(a *worker.App) {
			a.ConfigureMcpResource("test://a/{id}").WithCompletion("name", "1").Handle(readText)
		}, message: `"name" is not a variable of the template`},
		{name: "nil completion function", configure: func(a *worker.App) {
			a.ConfigureMcpResource("test://a/{id}").WithCompletionFunc("id", nil).Handle(readText)
		}, is: worker.ErrNoCompletionFunc},
		{name: "empty metadata key", configure: func(a *worker.App) { a.ConfigureMcpResource("test://a").WithMetadata("", 1).Handle(readText) },
			is: worker.ErrEmptyMetadataKey},
		{name: "function name from an odd URI", configure: func(a *worker.App) { a.ConfigureMcpResource("1a://x").Handle(readText) },
			as: new(*binding.URIError)},
		{name: "resource function used by a tool", configure: func(a *worker.App) {
			a.ConfigureMcpTool("test_a").Handle(toolText)
			a.ConfigureMcpResource("test://a").Handle(readText)
		}, is: worker.ErrDuplicateFunction, message: `function "test_a" is already used by tool "test_a"`},

		{name: "prompt without handler", configure: func(a *worker.App) { a.ConfigureMcpPrompt("p") },
			is: worker.ErrNoHandler, message: `prompt "p": the prompt has no handler: call Handle or use AddPrompt`},
		{name: "duplicate prompt names", configure: func(a *worker.App) {
			a.ConfigureMcpPrompt("review").Handle(promptText)
			a.ConfigureMcpPrompt("Review").WithFunctionName("review2").Handle(promptText)
		}, as: new(*binding.DuplicateError), message: `prompt "Review" is already registered by function "review"`},
		{name: "prompt function clash", configure: func(a *worker.App) {
			a.ConfigureMcpPrompt("review").Handle(promptText)
			a.ConfigureMcpPrompt("Review").Handle(promptText)
		}, is: worker.ErrDuplicateFunction, message: `function "Review" is already used by prompt "review"`},
		{name: "empty argument name", configure: func(a *worker.App) {
			a.ConfigureMcpPrompt("p").WithArgument("", "d", worker.Required).Handle(promptText)
		},
			as: new(*binding.LoadError), message: "promptArguments[0]: the name is missing or blank"},
		{name: "argument twice", configure: func(a *worker.App) {
			a.ConfigureMcpPrompt("p").WithArgument("a", "", worker.Required).WithArgument("a", "", worker.Optional).Handle(promptText)
		}, message: `argument "a" is declared twice`},
		{name: "completion of an undeclared argument", configure: func(a *worker.App) {
			a.ConfigureMcpPrompt("p").WithCompletion("city", "Oslo").Handle(promptText)
		}, message: `"city" is not an argument of the prompt`},
		{name: "prompt name not a function name", configure: func(a *worker.App) { a.ConfigureMcpPrompt("1st").Handle(promptText) },
			is: worker.ErrInvalidFunctionName, message: "(set one with WithFunctionName)"},
		{name: "typed prompt with a number", configure: func(a *worker.App) {
			worker.AddPrompt(a, "p", func(context.Context, *worker.PromptContext, struct{ N int }) (*worker.PromptResult, error) {
				return nil, nil
			})
		}, is: worker.ErrPromptInputType, message: "field N is int; prompt arguments are strings"},
		{name: "typed prompt not a struct", configure: func(a *worker.App) {
			worker.AddPrompt(a, "p", func(context.Context, *worker.PromptContext, string) (*worker.PromptResult, error) { return nil, nil })
		}, is: worker.ErrPromptInputType, message: "string is not a struct"},
		{name: "typed prompt nil handler", configure: func(a *worker.App) { worker.AddPrompt[struct{}](a, "p", nil) },
			is: worker.ErrNoHandler, message: "AddPrompt was given a nil handler"},
		{name: "prompt icon", configure: func(a *worker.App) { a.ConfigureMcpPrompt("p").WithIcons(worker.Icon{}).Handle(promptText) },
			message: "icons[0]: src is missing"},

		{name: "app without view", configure: func(a *worker.App) {
			a.ConfigureMcpTool("t").AsMcpApp(func(*worker.AppBuilder) {}).Handle(toolText)
		}, is: worker.ErrApp, message: `tool "t" (function "functions--mcpapp-t"): invalid MCP App configuration: the app has no view: call WithView`},
		{name: "app view missing from its FS", configure: func(a *worker.App) {
			a.ConfigureMcpTool("t").AsMcpApp(func(app *worker.AppBuilder) { app.WithView(worker.ViewFromFS(fstest.MapFS{}, "v.html")) }).Handle(toolText)
		}, is: worker.ErrApp, message: `the view "v.html"`},
		{name: "app view without source", configure: func(a *worker.App) {
			a.ConfigureMcpTool("t").AsMcpApp(func(app *worker.AppBuilder) { app.WithView(worker.ViewSource{}) }).Handle(toolText)
		}, is: worker.ErrApp, message: "the view has no source"},
		{name: "empty CSP origin", configure: func(a *worker.App) {
			a.ConfigureMcpTool("t").AsMcpApp(func(app *worker.AppBuilder) {
				app.WithView(worker.ViewFromHTML("<p/>")).WithCSP(func(c *worker.CSPBuilder) { c.ConnectTo(" ") })
			}).Handle(toolText)
		}, is: worker.ErrApp, message: "a CSP origin is empty"},
		{name: "empty assets folder", configure: func(a *worker.App) {
			a.ConfigureMcpTool("t").AsMcpApp(func(app *worker.AppBuilder) {
				app.WithView(worker.ViewFromHTML("<p/>"))
				app.WithStaticAssets("", nil)
			}).Handle(toolText)
		}, is: worker.ErrApp, message: "WithStaticAssets was given an empty directory"},
		{name: "nil app function", configure: func(a *worker.App) { a.ConfigureMcpTool("t").AsMcpApp(nil).Handle(toolText) },
			is: worker.ErrApp},
		{name: "app view URI taken by a resource", configure: func(a *worker.App) {
			a.ConfigureMcpResource("ui://t/view").Handle(readText)
			a.ConfigureMcpTool("t").AsMcpApp(func(app *worker.AppBuilder) { app.WithView(worker.ViewFromHTML("<p/>")) }).Handle(toolText)
		}, as: new(*binding.DuplicateError), message: `resource "ui://t/view" is already registered by function "ui_t_view"`},
		{name: "view named by hand and not served", configure: func(a *worker.App) {
			a.ConfigureMcpTool("t").WithMetadata("ui", map[string]string{"resourceUri": "ui://t/view"}).Handle(toolText)
		}, is: worker.ErrApp, message: `tool "t": invalid MCP App configuration: the MCP App view is not served: _meta.ui.resourceUri is "ui://t/view"`},
		{name: "app tool name not fit for the view function", configure: func(a *worker.App) {
			a.ConfigureMcpTool("t.v").WithFunctionName("tv").AsMcpApp(func(app *worker.AppBuilder) { app.WithView(worker.ViewFromHTML("<p/>")) }).Handle(toolText)
		}, is: worker.ErrInvalidFunctionName, message: `"functions--mcpapp-t.v" is not a valid function name`},
		{name: "tool icon", configure: func(a *worker.App) {
			a.ConfigureMcpTool("t").WithIcons(worker.Icon{Src: "https://a/b", Theme: "blue"}).Handle(toolText)
		}, message: `theme "blue" is not light or dark`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := worker.New(&worker.Options{Stdout: io.Discard, Stderr: io.Discard})
			tc.configure(a)
			err := a.Build()
			require.Error(t, err)
			var ce *worker.ConfigError
			require.ErrorAs(t, err, &ce)
			if tc.is != nil {
				assert.ErrorIs(t, err, tc.is)
			}
			if tc.as != nil {
				assert.ErrorAs(t, err, tc.as)
			}
			if tc.message != "" {
				assert.Contains(t, err.Error(), tc.message)
			}
			fns, ferr := a.Functions()
			assert.Nil(t, fns, "nothing is emitted")
			assert.Equal(t, err.Error(), ferr.Error())
		})
	}
}

// TestTypedPromptWithANumberIsOneProblem: a typed prompt whose input has a
// field that is not a string is reported as that, not also as a prompt
// without a handler.
func TestTypedPromptWithANumberIsOneProblem(t *testing.T) {
	a := worker.New(nil)
	worker.AddPrompt(a, "p", func(context.Context, *worker.PromptContext, struct{ N int }) (*worker.PromptResult, error) {
		return nil, nil
	})
	err := a.Build()
	require.Error(t, err)
	assert.ErrorIs(t, err, worker.ErrPromptInputType)
	assert.NotErrorIs(t, err, worker.ErrNoHandler)
	assert.Equal(t, `prompt "p": the input type cannot be used for prompt arguments: field N is int; prompt arguments are strings`, err.Error())
}

func TestKindBuildReportsEveryProblem(t *testing.T) {
	a := worker.New(nil)
	a.ConfigureMcpResource("nope").WithMimeType("x").WithSize(-5).Handle(readText)
	a.ConfigureMcpPrompt("p").WithArgument(" ", "", worker.Required)
	a.ConfigureMcpTool("t").AsMcpApp(func(*worker.AppBuilder) {}).Handle(toolText)
	err := a.Build()
	require.Error(t, err)
	var problems []*worker.ConfigError
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *worker.ConfigError
		require.ErrorAs(t, e, &ce)
		problems = append(problems, ce)
	}
	kinds := map[string]int{}
	for _, p := range problems {
		switch {
		case p.Resource != "":
			kinds["resource"]++
		case p.Prompt != "":
			kinds["prompt"]++
		default:
			kinds["tool"]++
		}
	}
	assert.Equal(t, map[string]int{"resource": 3, "prompt": 1, "tool": 1}, kinds, "%v", err)
	var le *binding.LoadError
	assert.True(t, errors.As(err, &le), "the host's own check is reachable")
}

// TestViewFileIsCheckedWhenServing shows a view read from a file: a
// relative path is read from the app folder, and a missing file stops
// Serve (emitting the metadata does not need it).
func TestViewFileIsCheckedWhenServing(t *testing.T) {
	root := t.TempDir()
	newApp := func() *worker.App {
		a := worker.New(&worker.Options{Stdout: io.Discard, Stderr: io.Discard, ScriptRoot: root})
		a.ConfigureMcpTool("t").AsMcpApp(func(app *worker.AppBuilder) { app.WithView(worker.ViewFromFile("ui/view.html")) }).Handle(toolText)
		return a
	}
	require.NoError(t, newApp().Build(), "the file is not needed to emit")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	err = newApp().Serve(context.Background(), l)
	require.Error(t, err)
	assert.ErrorIs(t, err, worker.ErrApp)
	assert.Contains(t, err.Error(), filepath.Join(root, "ui", "view.html")+" was not found")

	require.NoError(t, os.MkdirAll(filepath.Join(root, "ui"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "ui", "view.html"), []byte("<p>from a file</p>"), 0o644))
	base := serve(t, newApp())
	r := postKind(t, base, "functions--mcpapp-t", `{"uri":"ui://t/view"}`, 1, nil)
	assert.Equal(t, `{"content":"{\"uri\":\"ui://t/view\",\"mimeType\":\"text/html;profile=mcp-app\",\"text\":\"<p>from a file</p>\"}"}`, returnValueText(t, r))
}

func TestConfigErrorNamesTheKind(t *testing.T) {
	for _, tc := range []struct {
		err  *worker.ConfigError
		want string
	}{
		{&worker.ConfigError{Tool: "t", Err: worker.ErrNoHandler}, `tool "t": `},
		{&worker.ConfigError{Tool: "t", Function: "f", Err: worker.ErrNoHandler}, `tool "t" (function "f"): `},
		{&worker.ConfigError{Resource: "test://a", Function: "test_a", Err: worker.ErrNoHandler}, `resource "test://a" (function "test_a"): `},
		{&worker.ConfigError{Prompt: "p", Function: "p", Err: worker.ErrNoHandler}, `prompt "p": `},
	} {
		assert.Equal(t, tc.want+worker.ErrNoHandler.Error(), tc.err.Error())
	}
	a := worker.New(nil)
	a.ConfigureMcpTool("review").Handle(toolText)
	a.ConfigureMcpPrompt("review").Handle(promptText)
	assert.ErrorContains(t, a.Build(), `prompt "review": function "review" is already used by tool "review" (set another with WithFunctionName)`)
}

// TestViewNamedByHand: a tool may name its view by hand when a resource
// function serves it; the host applies the same rule.
func TestViewNamedByHand(t *testing.T) {
	a := worker.New(nil)
	a.ConfigureMcpResource("ui://t/page").WithMimeType("text/html;profile=mcp-app").Handle(readText)
	a.ConfigureMcpTool("t").WithMetadata("ui", map[string]string{"resourceUri": "ui://t/page"}).Handle(toolText)
	assert.NoError(t, a.Build())
}
