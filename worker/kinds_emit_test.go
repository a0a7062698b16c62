package worker

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

type goldenTrip struct {
	City  string  `json:"city" jsonschema:"Where to go"`
	Days  *string `json:"days,omitempty" description:"How many days"`
	Notes string  `json:"notes,omitzero"`
	Skip  string  `json:"-"`
}

// goldenKindsApp has one function of each new kind and feature.
func goldenKindsApp() *App {
	a := New(&Options{Stdout: io.Discard, Stderr: io.Discard})
	read := func(context.Context, *ResourceContext) (*ResourceResult, error) { return TextResource("x"), nil }
	get := func(context.Context, *PromptContext) (*PromptResult, error) { return TextPromptResult("x"), nil }
	complete := func(context.Context, *CompletionContext) ([]string, error) { return nil, nil }

	a.ConfigureMcpResource("test://static-text").WithName("static-text").WithTitle("Static <text>").
		WithDescription("A static text resource.").WithMimeType("text/plain").WithSize(49).
		WithMetadata("audience", []string{"user"}).
		WithIcons(Icon{Src: "https://example.com/text.png", MimeType: "image/png", Sizes: []string{"48x48"}}).
		Handle(read)
	a.ConfigureMcpResource("test://template/{id}/data").WithName("template-data").WithMimeType("application/json").
		WithFunctionName("template_data").WithCompletion("id", "123", "456").Handle(read)
	a.ConfigureMcpPrompt("review").WithTitle("Review").WithDescription("Reviews code.").
		WithArgument("code", "The code to review.", Required).
		WithArgument("style", "How to say it.", Optional).
		WithCompletion("style", "brief", "detailed").
		WithCompletionFunc("code", complete).
		WithMetadata("category", "dev").
		WithIcons(Icon{Src: "data:image/svg+xml;base64,PHN2Zy8+", MimeType: "image/svg+xml", Theme: "dark"}).
		Handle(get)
	AddPrompt(a, "plan_trip", func(context.Context, *PromptContext, goldenTrip) (*PromptResult, error) { return nil, nil }).
		WithDescription("Plans a trip.")
	views := fstest.MapFS{"view.html": {Data: []byte("<p>chart</p>")}}
	a.ConfigureMcpTool("chart").WithDescription("Draws a chart.").
		WithMetadata("ui", "replaced by the app").WithMetadata("version", 2).
		WithAnnotations(ToolAnnotations{Title: "Chart", ReadOnlyHint: new(true), OpenWorldHint: new(false)}).
		WithIcons(Icon{Src: "https://example.com/chart.png"}).
		AsMcpApp(func(app *AppBuilder) {
			app.WithView(ViewFromFS(views, "view.html")).WithTitle("Chart view")
			app.WithVisibility(VisibilityModel)
			app.WithStaticAssets("ui/dist", &StaticAssetOptions{IncludeSourceMaps: true})
		}).
		Handle(noop)
	a.ConfigureMcpTool("plain_app").
		AsMcpApp(func(app *AppBuilder) { app.WithView(ViewFromHTML("<p/>")) }).
		Handle(noop)
	return a
}

// TestKindsGoldenFunctions compares every function the new kinds emit with
// testdata/kinds/<function>/function.json (go test -update rewrites them),
// and reads each back as the host does.
func TestKindsGoldenFunctions(t *testing.T) {
	fns, err := goldenKindsApp().Functions()
	requireNoError(t, err, "Functions")
	var names []string
	var reg binding.Registry
	for _, f := range fns {
		names = append(names, f.Name)
		data, err := f.Encode()
		requireNoError(t, err, "Encode")
		golden(t, filepath.Join("kinds", f.Name, "function.json"), data)
		back, err := metadata.ParseFunction(f.Name, "", data)
		requireNoError(t, err, "ParseFunction")
		switch {
		case len(back.ResourceTriggers()) == 1:
			r, err := binding.LoadResource(back, back.ResourceTriggers()[0], "")
			requireNoError(t, err, "LoadResource "+f.Name)
			requireNoError(t, reg.AddResource(r), "AddResource "+f.Name)
		case len(back.PromptTriggers()) == 1:
			p, err := binding.LoadPrompt(back, back.PromptTriggers()[0], "")
			requireNoError(t, err, "LoadPrompt "+f.Name)
			requireNoError(t, reg.AddPrompt(p), "AddPrompt "+f.Name)
		default:
			_, err := binding.LoadTool(back, back.ToolTriggers()[0], "")
			requireNoError(t, err, "LoadTool "+f.Name)
		}
	}
	want := "chart,functions--mcpapp-chart,functions--mcpapp-plain_app,plain_app,plan_trip,review,template_data,test_static_text"
	if got := strings.Join(names, ","); got != want {
		t.Errorf("functions = %s, want %s", got, want)
	}
	fns2, _ := goldenKindsApp().Functions()
	for i := range fns {
		a, _ := fns[i].Encode()
		b, _ := fns2[i].Encode()
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs between two builds", fns[i].Name)
		}
	}
	if len(reg.Resources()) != 3 || len(reg.Templates()) != 1 || len(reg.Prompts()) != 2 {
		t.Errorf("registry: %d resources, %d templates, %d prompts", len(reg.Resources()), len(reg.Templates()), len(reg.Prompts()))
	}
}
