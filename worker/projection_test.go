package worker

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

// TestNaturalOutputs checks that a non-object output schema, explicit or
// inferred, is emitted as its projection plus naturalOutputSchema, and that
// every result goes out wrapped so that it matches the projection.
func TestNaturalOutputs(t *testing.T) {
	const fib = `{"type":"array","items":{"$ref":"#/$defs/n"},"$defs":{"n":{"type":"integer","minimum":0}}}`
	a := New(nil)
	a.ConfigureMcpTool("fib").
		WithOutputSchema(fib).
		Handle(func(context.Context, *ToolContext) (*Result, error) {
			return &Result{Content: []Content{Text("[1,1,2]"), Text("three terms")}, StructuredContent: []int{1, 1, 2}}, nil
		})
	a.ConfigureMcpTool("either").
		WithOutputSchema(`{"oneOf":[{"type":"string"},{"type":"object"}]}`).
		WithOutputField("value").
		Handle(func(context.Context, *ToolContext) (*Result, error) {
			return &Result{StructuredContent: map[string]int{"a": 1}}, nil // an object, wrapped all the same
		})
	// Text that is not exactly the compact JSON is the handler's own, as for
	// an object tool (metadata.IsTextCopy): it is kept and the copy added.
	a.ConfigureMcpTool("pretty").
		WithOutputSchema(`{"type":"array","items":{"type":"integer"}}`).
		Handle(func(context.Context, *ToolContext) (*Result, error) {
			return &Result{Content: []Content{Text("[1, 2]")}, StructuredContent: []int{1, 2}}, nil
		})
	AddTool(a, "count", func(context.Context, *ToolContext, struct{}) (*Result, int, error) { return nil, 3, nil })
	a.ConfigureMcpTool("maybe").
		WithOutputSchema(`{"type":["object","null"],"properties":{"a":{"type":"integer"}}}`).
		Handle(func(context.Context, *ToolContext) (*Result, error) {
			return &Result{StructuredContent: map[string]int{"a": 1}}, nil
		})
	a.ConfigureMcpTool("fails").
		WithOutputSchema(`{"type":"array"}`).
		Handle(func(context.Context, *ToolContext) (*Result, error) { return ErrorResult("no"), nil })
	requireNoError(t, a.Build(), "Build")

	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	tests := []struct {
		tool, natural, projected string
		structured, texts        []string // want structuredContent ("" = none) and text blocks
	}{
		{"fib", fib, `{"type":"object","properties":{"result":{"type":"array","items":{"$ref":"#/properties/result/$defs/n"},"$defs":{"n":{"type":"integer","minimum":0}}}},"required":["result"]}`,
			[]string{`{"result":[1,1,2]}`}, []string{`{"result":[1,1,2]}`, "three terms"}},
		{"pretty", `{"type":"array","items":{"type":"integer"}}`, `{"type":"object","properties":{"result":{"type":"array","items":{"type":"integer"}}},"required":["result"]}`,
			[]string{`{"result":[1,2]}`}, []string{"[1, 2]", `{"result":[1,2]}`}},
		{"either", `{"oneOf":[{"type":"string"},{"type":"object"}]}`, `{"type":"object","properties":{"value":{"oneOf":[{"type":"string"},{"type":"object"}]}},"required":["value"]}`,
			[]string{`{"value":{"a":1}}`}, []string{`{"value":{"a":1}}`}},
		{"count", `{"type":"integer"}`, `{"type":"object","properties":{"result":{"type":"integer"}},"required":["result"]}`,
			[]string{`{"result":3}`}, []string{`{"result":3}`}},
		{"maybe", `{"type":["object","null"],"properties":{"a":{"type":"integer"}}}`, `{"type":"object","properties":{"a":{"type":"integer"}}}`,
			[]string{`{"a":1}`}, []string{`{"a":1}`}},
		{"fails", `{"type":"array"}`, `{"type":"object","properties":{"result":{"type":"array"}},"required":["result"]}`,
			[]string{""}, []string{"no"}},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			tr := trigger(t, a, tc.tool)
			out, _ := str(t, tr, metadata.KeyOutputSchema)
			assertJSONEq(t, tc.projected, out, "outputSchema")
			natural, _ := str(t, tr, metadata.KeyNaturalOutputSchema)
			assertJSONEq(t, tc.natural, natural, "naturalOutputSchema")

			r := post(t, srv.URL, tc.tool, body(t, `{"name":"`+tc.tool+`","arguments":{}}`, 1))
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			if tc.structured[0] == "" {
				if !r.result.IsError || r.result.StructuredContent != nil {
					t.Errorf("an error result is left alone: %s", r.env.Content)
				}
			} else {
				assertJSONEq(t, tc.structured[0], string(r.result.StructuredContent), "structuredContent")
				projected, err := binding.ParseSchema(binding.OutputSchema, out)
				requireNoError(t, err, "ParseSchema")
				_, err = projected.ValidateJSON(r.result.StructuredContent)
				requireNoError(t, err, "the value matches the projection")
			}
			var texts []string
			for _, c := range r.result.Content {
				var block struct{ Type, Text string }
				requireNoError(t, json.Unmarshal(c, &block), "content block")
				texts = append(texts, block.Text)
			}
			if len(texts) != len(tc.texts) {
				t.Fatalf("texts = %q, want %q", texts, tc.texts)
			}
			for i := range texts {
				if texts[i] != tc.texts[i] {
					t.Errorf("text %d = %q, want %q", i, texts[i], tc.texts[i])
				}
			}
		})
	}
}
