package metadata

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ptr[T any](v T) *T { return &v }

// TestNewKindFunctionsGolden writes one function of each new kind and
// compares it with testdata/<kind>_function.golden.json: the keys, their
// order and their JSON types are what the extension's attribute binders read
// (strings for uri, resourceName, title, description, mimeType, metadata,
// promptArguments and icons; a number for size; a boolean for
// useResultSchema).
func TestNewKindFunctionsGolden(t *testing.T) {
	for _, tc := range []struct {
		name  string
		build func() (*Function, error)
	}{
		{"resource", func() (*Function, error) {
			return NewResourceFunction("static_text", &ResourceOptions{
				URI: "test://static-text", Name: "static-text", Title: "Static <text>",
				Description: "A static text resource.", MimeType: "text/plain", Size: ptr(int64(49)),
				Metadata: []Field{{Key: "audience", Value: raw(`["user"]`)}},
				Icons:    []Icon{{Src: "https://example.com/a.png", MimeType: "image/png", Sizes: []string{"48x48"}}},
			})
		}},
		{"resource_minimal", func() (*Function, error) {
			return NewResourceFunction("minimal", &ResourceOptions{URI: "test://minimal", Name: "minimal"})
		}},
		{"template", func() (*Function, error) {
			return NewResourceFunction("template", &ResourceOptions{
				URI: "test://template/{id}/data", Name: "template-data", MimeType: "application/json",
				Completions: []CompletionSource{{Name: "id", Values: []string{"123", "456"}}},
			})
		}},
		{"prompt", func() (*Function, error) {
			return NewPromptFunction("trip", &PromptOptions{
				Name: "plan_trip", Title: "Plan a trip", Description: "Plans a trip.",
				Arguments: []PromptArgument{
					{Name: "city", Description: "Where to", Required: true},
					{Name: "days", Title: "Days"},
				},
				Metadata:    []Field{{Key: "category", Value: raw(`"travel"`)}},
				Icons:       []Icon{{Src: "data:image/svg+xml;base64,PHN2Zy8+", MimeType: "image/svg+xml", Theme: IconThemeDark}},
				Completions: []CompletionSource{{Name: "city", Values: []string{"Paris", "Park City"}}, {Name: "days", Dynamic: true}},
			})
		}},
		{"prompt_minimal", func() (*Function, error) {
			return NewPromptFunction("simple", &PromptOptions{Name: "simple"})
		}},
		{"app_view", func() (*Function, error) { return NewAppViewFunction("bar_chart", "") }},
		{"app_view_titled", func() (*Function, error) { return NewAppViewFunction("bar_chart", "Bar chart") }},
		{"tool_annotations", func() (*Function, error) {
			return NewToolFunction("notes", &ToolOptions{
				ToolName: "notes", Description: "Reads notes.",
				Annotations: &ToolAnnotations{Title: "Notes", ReadOnlyHint: ptr(true), DestructiveHint: ptr(false), OpenWorldHint: ptr(false)},
				Icons:       []Icon{{Src: "https://example.com/n.png"}},
			})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fn, err := tc.build()
			require.NoError(t, err)
			data, err := fn.Encode()
			require.NoError(t, err)
			golden(t, filepath.Join("testdata", tc.name+"_function.golden.json"), data)
			back, err := ParseFunction(fn.Name, "", data)
			require.NoError(t, err, "what is written reads back")
			again, err := back.Encode()
			require.NoError(t, err)
			assert.Equal(t, string(data), string(again), "a round trip keeps every byte")
		})
	}
}

func TestNewKindFunctionJSONTypes(t *testing.T) {
	fn, err := NewResourceFunction("r", &ResourceOptions{URI: "test://x", Name: "x", Size: ptr(int64(0)),
		Metadata: []Field{{Key: "k", Value: raw(`1`)}}})
	require.NoError(t, err)
	b := fn.Bindings[0]
	size, _ := b.Get(KeySize)
	assert.Equal(t, "0", string(size), "size is a number, also when 0")
	meta, _ := b.Get(KeyMetadata)
	assert.Equal(t, `"{\"k\":1}"`, string(meta), "metadata is a string holding JSON")

	fn, err = NewPromptFunction("p", &PromptOptions{Name: "p", Arguments: []PromptArgument{{Name: "a"}}})
	require.NoError(t, err)
	b = fn.Bindings[0]
	args, _ := b.Get(KeyPromptArguments)
	assert.Equal(t, `"[{\"name\":\"a\",\"required\":false}]"`, string(args), "promptArguments is a string; required is always written")
	use, _ := b.Get(KeyUseResultSchema)
	assert.Equal(t, "true", string(use))
	_, hasDesc := b.Get(KeyDescription)
	assert.False(t, hasDesc, "no description key when there is none")
}

func TestNewKindFunctionErrors(t *testing.T) {
	var fe *FunctionError
	_, err := NewResourceFunction("host", &ResourceOptions{URI: "test://x", Name: "x"})
	assert.ErrorAs(t, err, &fe)
	_, err = NewPromptFunction("", &PromptOptions{Name: "p"})
	assert.ErrorAs(t, err, &fe)
	_, err = NewAppViewFunction("bad.name", "")
	require.ErrorAs(t, err, &fe)
	assert.Contains(t, err.Error(), "functions--mcpapp-bad.name")
	_, err = NewResourceFunction("r", &ResourceOptions{Name: "x"})
	assert.ErrorAs(t, err, &fe, "a resource without uri")
	_, err = NewPromptFunction("p", &PromptOptions{})
	assert.ErrorAs(t, err, &fe, "a prompt without a name")
}

// TestEmitKindsPipelineGolden runs EmitResources and EmitPrompts over
// function.json files that already carry bindings, as the .NET worker's
// transformer runs over attribute-made bindings: configured metadata merges
// over the binding's (configured keys win), configured prompt arguments
// replace the binding's, other keys keep their place, and an out binding
// keeps useResultSchema off.
func TestEmitKindsPipelineGolden(t *testing.T) {
	resources := func(uri string) *ResourceOptions {
		if uri == "test://files/{path}" {
			return &ResourceOptions{URI: uri, Metadata: []Field{{Key: "version", Value: raw(`2`)}},
				Completions: []CompletionSource{{Name: "path", Dynamic: true}}}
		}
		return nil
	}
	prompts := func(name string) *PromptOptions {
		if name == "review" {
			return &PromptOptions{Name: name, Arguments: []PromptArgument{{Name: "code", Required: true}},
				Metadata: []Field{{Key: "owner", Value: raw(`"me"`)}}}
		}
		return nil
	}
	ins, err := filepath.Glob(filepath.Join("testdata", "kinds", "*.in.json"))
	require.NoError(t, err)
	require.NotEmpty(t, ins)
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(in)
			require.NoError(t, err)
			fn, err := ParseFunction(name, in, data)
			require.NoError(t, err)
			require.NoError(t, EmitResources(fn, resources))
			require.NoError(t, EmitPrompts(fn, prompts))
			out, err := fn.Encode()
			require.NoError(t, err)
			golden(t, strings.TrimSuffix(in, ".in.json")+".golden.json", out)
		})
	}
}

func TestEmitKindsReportsTriggersWithoutID(t *testing.T) {
	fn := &Function{Name: "f", Bindings: []*Binding{newTrigger(TypeMcpResourceTrigger, DirectionIn)}}
	err := EmitResources(fn, nil)
	var fe *FunctionError
	require.ErrorAs(t, err, &fe)
	assert.Contains(t, err.Error(), "has no uri")
	fn = &Function{Name: "f", Bindings: []*Binding{newTrigger(TypeMcpPromptTrigger, DirectionIn)}}
	assert.ErrorContains(t, EmitPrompts(fn, nil), "has no promptName")
}

func TestEncodeCompletions(t *testing.T) {
	s, err := EncodeCompletions([]CompletionSource{{Name: "b", Values: []string{"x<y"}}, {Name: "a", Dynamic: true}, {Name: "c"}})
	require.NoError(t, err)
	assert.Equal(t, `{"b":{"values":["x<y"]},"a":{"dynamic":true},"c":{"values":[]}}`, s, "declared order, no HTML escaping")
	s, err = EncodeCompletions(nil)
	require.NoError(t, err)
	assert.Equal(t, `{}`, s)
}

func TestAppViewNames(t *testing.T) {
	assert.Equal(t, "ui://bar_chart/view", AppViewURI("bar_chart"))
	assert.Equal(t, "bar_chart_view", AppViewResourceName("bar_chart"))
	assert.Equal(t, "functions--mcpapp-bar_chart", AppViewFunctionName("bar_chart"))
}

func TestFunctionTriggersOfKinds(t *testing.T) {
	fn := &Function{Name: "f", Bindings: []*Binding{
		newTrigger("MCPResourceTrigger", DirectionIn), newTrigger(TypeMcpPromptTrigger, DirectionIn), nil,
		newTrigger(TypeMcpToolTrigger, DirectionIn),
	}}
	assert.Len(t, fn.ResourceTriggers(), 1, "types match case-insensitively")
	assert.Len(t, fn.PromptTriggers(), 1)
}

func TestToolAnnotationsIsZero(t *testing.T) {
	assert.True(t, ToolAnnotations{}.IsZero())
	assert.False(t, ToolAnnotations{Title: "x"}.IsZero())
	assert.False(t, ToolAnnotations{IdempotentHint: ptr(false)}.IsZero(), "a hint set to false is still set")
	fn, err := NewToolFunction("t", &ToolOptions{ToolName: "t", Annotations: &ToolAnnotations{}})
	require.NoError(t, err)
	_, ok := fn.Bindings[0].Get(KeyAnnotations)
	assert.False(t, ok, "empty annotations are not written")
}

func TestMetadataFieldStaysInPlace(t *testing.T) {
	// A binding with metadata already present: the merged value replaces it
	// in place.
	var fn Function
	require.NoError(t, json.Unmarshal([]byte(`{"bindings":[{"type":"mcpPromptTrigger","metadata":{"a":1},"promptName":"p","name":"context","direction":"in"}]}`), &fn))
	fn.Name = "f"
	require.NoError(t, EmitPrompts(&fn, func(string) *PromptOptions {
		return &PromptOptions{Metadata: []Field{{Key: "b", Value: raw(`2`)}, {Key: "a", Value: raw(`3`)}}}
	}))
	data, err := fn.MarshalJSON()
	require.NoError(t, err)
	assert.Equal(t, `{"bindings":[{"type":"mcpPromptTrigger","metadata":"{\"a\":3,\"b\":2}","promptName":"p","name":"context","direction":"in","useResultSchema":true}]}`, string(data))
}
