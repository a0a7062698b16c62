package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func noop(context.Context, *ToolContext) (*Result, error) { return TextResult("ok"), nil }

// isTrue reports whether key holds the JSON boolean true.
func isTrue(b *metadata.Binding, key string) bool {
	v, ok := b.Lookup(key)
	return ok && string(v) == "true"
}

// trigger returns the only tool's trigger binding of a successful build.
func trigger(t *testing.T, a *App, fn string) *metadata.Binding {
	t.Helper()
	fns, err := a.Functions()
	requireNoError(t, err, "Functions")
	for _, f := range fns {
		if f.Name == fn {
			return f.Bindings[0]
		}
	}
	t.Fatalf("no function %q", fn)
	return nil
}

func str(t *testing.T, b *metadata.Binding, key string) (string, bool) {
	t.Helper()
	raw, ok := b.Get(key)
	if !ok {
		return "", false
	}
	var s string
	requireNoError(t, json.Unmarshal(raw, &s), key+" is a string")
	return s, true
}

// configErrors returns every *ConfigError of a joined build error.
func configErrors(t *testing.T, err error) []*ConfigError {
	t.Helper()
	var out []*ConfigError
	for _, p := range problems(err) {
		var ce *ConfigError
		if !errors.As(p, &ce) {
			t.Errorf("problem %v is not a *ConfigError", p)
			continue
		}
		out = append(out, ce)
	}
	return out
}

func TestSchemaRules(t *testing.T) {
	type check func(t *testing.T, err error)
	is := func(target error) check {
		return func(t *testing.T, err error) {
			if !errors.Is(err, target) {
				t.Errorf("error %v is not %v", err, target)
			}
		}
	}
	syntax := func(t *testing.T, err error) {
		var e *binding.SyntaxError
		if !errors.As(err, &e) {
			t.Errorf("error %v is not a *binding.SyntaxError", err)
		}
	}
	shape := func(rule string) check {
		return func(t *testing.T, err error) {
			var e *binding.ShapeError
			if !errors.As(err, &e) {
				t.Errorf("error %v is not a *binding.ShapeError", err)
				return
			}
			if e.Rule != rule {
				t.Errorf("rule = %q, want %q", e.Rule, rule)
			}
		}
	}
	compile := func(t *testing.T, err error) {
		var e *binding.CompileError
		if !errors.As(err, &e) {
			t.Errorf("error %v is not a *binding.CompileError", err)
		}
	}
	// in is the check for an input schema, out for an output schema (nil:
	// valid). Output schemas may have any root (SEP-2106), so most of the
	// MCP shape rules do not apply to them.
	tests := []struct {
		name    string
		schema  string
		in, out check
	}{
		{"minimal", `{"type":"object"}`, nil, nil},
		{"properties and required", `{"type":"object","properties":{"x":{"type":"string"}},"required":["x"]}`, nil, nil},
		{"required elements unchecked", `{"type":"object","required":[]}`, nil, nil},
		{"whitespace is compacted", "{ \"type\" : \"object\" }", nil, nil},
		{"empty", ``, is(binding.ErrEmptySchema), is(binding.ErrEmptySchema)},
		{"blank", "  \n", is(binding.ErrEmptySchema), is(binding.ErrEmptySchema)},
		{"not json", `{not json`, syntax, syntax},
		{"truncated", `{"type":"object","properties":{"x":"string"`, syntax, syntax},
		{"null literal", `null`, shape(binding.RuleObjectRoot), shape(binding.RuleSchemaRoot)},
		{"array root", `[1,2,3]`, shape(binding.RuleObjectRoot), shape(binding.RuleSchemaRoot)},
		{"string root", `"hello"`, shape(binding.RuleObjectRoot), shape(binding.RuleSchemaRoot)},
		{"boolean schema", `true`, shape(binding.RuleObjectRoot), nil},
		{"no type", `{"properties":{}}`, shape(binding.RuleTypeObject), nil},
		{"type string", `{"type":"string"}`, shape(binding.RuleTypeObject), nil},
		{"type array of object", `{"type":["object"]}`, shape(binding.RuleTypeObject), nil},
		{"type object or null", `{"type":["object","null"]}`, shape(binding.RuleTypeObject), nil},
		{"array schema", `{"type":"array","items":{"$ref":"#/$defs/i"},"$defs":{"i":{"type":"integer"}}}`, shape(binding.RuleTypeObject), nil},
		{"oneOf root", `{"oneOf":[{"type":"string"},{"type":"number"}]}`, shape(binding.RuleTypeObject), nil},
		{"type Object", `{"type":"Object"}`, shape(binding.RuleTypeObject), compile},
		{"type null", `{"type":null}`, shape(binding.RuleTypeObject), compile},
		{"properties array", `{"type":"object","properties":[]}`, shape(binding.RuleProperties), compile},
		{"properties null", `{"type":"object","properties":null}`, shape(binding.RuleProperties), compile},
		{"required string", `{"type":"object","required":"x"}`, shape(binding.RuleRequired), compile},
		{"required null", `{"type":"object","required":null}`, shape(binding.RuleRequired), compile},
		{"bad keyword value", `{"type":"object","properties":{"a":{"type":5}}}`, compile, compile},
		{"bad minimum", `{"type":"object","minProperties":-1}`, compile, compile},
		{"remote ref", `{"type":"object","properties":{"a":{"$ref":"https://example.com/x.json"}}}`, compile, compile},
	}
	for _, kind := range []string{"input", "output"} {
		for _, tc := range tests {
			t.Run(kind+"/"+tc.name, func(t *testing.T) {
				a := New(nil)
				b := a.ConfigureMcpTool("tool").Handle(noop)
				check := tc.in
				if kind == "input" {
					b.WithInputSchema(tc.schema)
				} else {
					b.WithOutputSchema(tc.schema)
					check = tc.out
				}
				err := a.Build()
				if check == nil {
					requireNoError(t, err, "Build")
					tr := trigger(t, a, "tool")
					key, want := metadata.KeyInputSchema, tc.schema
					if kind == "output" {
						key = metadata.KeyOutputSchema
						projected, _, err := binding.ProjectSchema(json.RawMessage(tc.schema), DefaultOutputField)
						requireNoError(t, err, "ProjectSchema")
						natural, hasNatural := str(t, tr, metadata.KeyNaturalOutputSchema)
						if string(projected) != compactJSON(t, tc.schema) {
							want = string(projected)
							if !hasNatural {
								t.Fatalf("naturalOutputSchema missing for %s", tc.schema)
							}
							assertJSONEq(t, tc.schema, natural, metadata.KeyNaturalOutputSchema)
						} else if hasNatural {
							t.Errorf("naturalOutputSchema = %s, want absent for an object schema", natural)
						}
					}
					got, ok := str(t, tr, key)
					if !ok {
						t.Fatalf("%s missing", key)
					}
					assertJSONEq(t, want, got, key)
					if strings.ContainsAny(got, " \n") {
						t.Errorf("%s not compact: %q", key, got)
					}
					return
				}
				if err == nil {
					t.Fatal("Build succeeded, want an error")
				}
				ces := configErrors(t, err)
				if len(ces) != 1 {
					t.Fatalf("got %d problems, want 1: %v", len(ces), err)
				}
				if ces[0].Tool != "tool" {
					t.Errorf("Tool = %q", ces[0].Tool)
				}
				if !strings.Contains(err.Error(), kind+" schema") {
					t.Errorf("message %q does not name the %s schema", err, kind)
				}
				check(t, err)
			})
		}
	}
}

func compactJSON(t *testing.T, text string) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(text)); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

type badIn string

func TestBuildRules(t *testing.T) {
	tests := []struct {
		name      string
		configure func(a *App)
		rule      error  // errors.Is target
		tool      string // the tool the problem names
		contains  string // a message fragment
	}{
		{"empty tool name", func(a *App) { a.ConfigureMcpTool("").Handle(noop) }, ErrEmptyToolName, "", "tool name is empty"},
		{"tool name not a folder name", func(a *App) { a.ConfigureMcpTool("get.weather").Handle(noop) }, ErrInvalidFunctionName, "get.weather", "WithFunctionName"},
		{"tool name breaks the MCP rule", func(a *App) { a.ConfigureMcpTool("get weather!").WithFunctionName("w").Handle(noop) }, ErrInvalidToolName, "get weather!", "must be 1 to 128 characters"},
		{"tool name too long", func(a *App) { a.ConfigureMcpTool(strings.Repeat("t", 129)).WithFunctionName("w").Handle(noop) }, ErrInvalidToolName, strings.Repeat("t", 129), "must be 1 to 128 characters"},
		{"function name starts with digit", func(a *App) { a.ConfigureMcpTool("t").WithFunctionName("1abc").Handle(noop) }, ErrInvalidFunctionName, "t", "must start with a letter"},
		{"function name reserved", func(a *App) { a.ConfigureMcpTool("t").WithFunctionName("Host").Handle(noop) }, ErrInvalidFunctionName, "t", "reserved"},
		{"function name too long", func(a *App) { a.ConfigureMcpTool("t").WithFunctionName("a" + strings.Repeat("b", 128)).Handle(noop) }, ErrInvalidFunctionName, "t", "at most 128"},
		{"no handler", func(a *App) { a.ConfigureMcpTool("t") }, ErrNoHandler, "t", "no handler"},
		{"nil handler", func(a *App) { a.ConfigureMcpTool("t").Handle(nil) }, ErrNoHandler, "t", "nil handler"},
		{"two handlers", func(a *App) { a.ConfigureMcpTool("t").Handle(noop).Handle(noop) }, ErrTwoHandlers, "t", "more than one handler"},
		{"same function folder", func(a *App) {
			a.ConfigureMcpTool("a").WithFunctionName("shared").Handle(noop)
			a.ConfigureMcpTool("b").WithFunctionName("Shared").Handle(noop)
		}, ErrDuplicateFunction, "b", `already used by tool "a"`},
		{"tool names differ in case", func(a *App) {
			a.ConfigureMcpTool("echo").Handle(noop)
			a.ConfigureMcpTool("Echo").WithFunctionName("echo2").Handle(noop)
		}, ErrDuplicateToolName, "Echo", "differs only in case"},
		{"empty property name", func(a *App) { a.ConfigureMcpTool("t").WithProperty("", String, "d", Required).Handle(noop) }, ErrEmptyPropertyName, "t", "property name is empty"},
		{"zero property type", func(a *App) { a.ConfigureMcpTool("t").WithProperty("p", PropertyType{}, "d", Required).Handle(noop) }, ErrNoPropertyType, "t", `property "p"`},
		{"empty metadata key", func(a *App) { a.ConfigureMcpTool("t").WithMetadata("", 1).Handle(noop) }, ErrEmptyMetadataKey, "t", "metadata key is empty"},
		{"metadata channel", func(a *App) { a.ConfigureMcpTool("t").WithMetadata("c", make(chan int)).Handle(noop) }, ErrMetadataValue, "t", `metadata "c"`},
		{"metadata NaN", func(a *App) { a.ConfigureMcpTool("t").WithMetadata("n", math.NaN()).Handle(noop) }, ErrMetadataValue, "t", `metadata "n"`},
		{"metadata bad raw JSON", func(a *App) { a.ConfigureMcpTool("t").WithMetadata("r", json.RawMessage(`{`)).Handle(noop) }, ErrMetadataValue, "t", `metadata "r"`},
		{"empty output field", func(a *App) { a.ConfigureMcpTool("t").WithOutputField("").Handle(noop) }, ErrEmptyOutputField, "t", "output field"},
		{"string input", func(a *App) {
			AddTool(a, "t", func(context.Context, *ToolContext, string) (*Result, struct{}, error) { return nil, struct{}{}, nil })
		}, ErrInputType, "t", "does not encode as a JSON object"},
		{"named string input", func(a *App) {
			AddTool(a, "t", func(context.Context, *ToolContext, badIn) (*Result, struct{}, error) { return nil, struct{}{}, nil })
		}, ErrInputType, "t", "badIn"},
		{"slice input", func(a *App) {
			AddTool(a, "t", func(context.Context, *ToolContext, []int) (*Result, struct{}, error) { return nil, struct{}{}, nil })
		}, ErrInputType, "t", "JSON object"},
		{"channel field input", func(a *App) {
			AddTool(a, "t", func(context.Context, *ToolContext, struct{ C chan int }) (*Result, struct{}, error) {
				return nil, struct{}{}, nil
			})
		}, ErrInputType, "t", "chan int"},
		{"func output", func(a *App) {
			AddTool(a, "t", func(context.Context, *ToolContext, struct{}) (*Result, func(), error) { return nil, nil, nil })
		}, ErrOutputType, "t", "func() is unsupported"},
		{"enum on int", func(a *App) {
			AddTool(a, "t", func(context.Context, *ToolContext, struct {
				N int `json:"n" enum:"1,2"`
			}) (*Result, struct{}, error) {
				return nil, struct{}{}, nil
			})
		}, ErrInputType, "t", "enum tag"},
		{"nil typed handler", func(a *App) {
			AddTool[struct{}, struct{}](a, "t", nil)
		}, ErrNoHandler, "t", "nil handler"},
		{"same tool name twice", func(a *App) {
			AddTool(a, "t", func(context.Context, *ToolContext, struct{}) (*Result, struct{}, error) { return nil, struct{}{}, nil })
			AddTool(a, "t", func(context.Context, *ToolContext, struct{}) (*Result, struct{}, error) { return nil, struct{}{}, nil })
		}, ErrTwoHandlers, "t", `tool name "t" is given a handler 2 times (AddTool or Handle): each tool needs a name of its own`},
		{"typed and raw handler", func(a *App) {
			AddTool(a, "t", func(context.Context, *ToolContext, struct{}) (*Result, struct{}, error) { return nil, struct{}{}, nil }).Handle(noop)
		}, ErrTwoHandlers, "t", "more than one"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := New(nil)
			a.ConfigureMcpTool("fine").Handle(noop) // a good tool never hides or causes problems
			tc.configure(a)
			err := a.Build()
			if err == nil {
				t.Fatal("Build succeeded, want an error")
			}
			ces := configErrors(t, err)
			if len(ces) != 1 {
				t.Fatalf("got %d problems, want 1: %v", len(ces), err)
			}
			ce := ces[0]
			if !errors.Is(ce, tc.rule) {
				t.Errorf("problem %v is not %v", ce, tc.rule)
			}
			if ce.Tool != tc.tool {
				t.Errorf("Tool = %q, want %q", ce.Tool, tc.tool)
			}
			if !strings.Contains(ce.Error(), tc.contains) {
				t.Errorf("message %q does not contain %q", ce.Error(), tc.contains)
			}
			if !strings.Contains(ce.Error(), `tool "`+tc.tool+`"`) {
				t.Errorf("message %q does not name the tool", ce.Error())
			}
			// every step that builds reports the same problems
			if _, ferr := a.Functions(); ferr == nil || ferr.Error() != err.Error() {
				t.Errorf("Functions error = %v, want %v", ferr, err)
			}
			if eerr := a.EmitMetadata(t.TempDir()); eerr == nil || eerr.Error() != err.Error() {
				t.Errorf("EmitMetadata error = %v, want %v", eerr, err)
			}
		})
	}
}

func TestBuildReportsEveryProblemOfEveryTool(t *testing.T) {
	a := New(nil)
	a.ConfigureMcpTool("one").WithOutputSchema(`{`).WithInputSchema(`{"type":"string"}`).WithMetadata("", 1)
	a.ConfigureMcpTool("two").WithFunctionName("host").WithProperty("", Integer, "", Optional).Handle(noop)
	a.ConfigureMcpTool("three").Handle(noop)
	err := a.Build()
	if err == nil {
		t.Fatal("Build succeeded")
	}
	ces := configErrors(t, err)
	got := map[string]int{}
	for _, ce := range ces {
		got[ce.Tool]++
	}
	// one: no handler, output syntax, input shape, metadata key; two: function name, property
	if got["one"] != 4 || got["two"] != 2 || got["three"] != 0 {
		t.Errorf("problems per tool = %v, want one:4 two:2\n%v", got, err)
	}
	var syn *binding.SyntaxError
	var shp *binding.ShapeError
	if !errors.As(err, &syn) || !errors.As(err, &shp) {
		t.Errorf("schema errors not reachable with errors.As: %v", err)
	}
}

func TestBuilderAccumulates(t *testing.T) {
	a := New(nil)
	b1 := a.ConfigureMcpTool("t").WithDescription("first").WithMetadata("k", 1).WithMetadata("z", true)
	b2 := a.ConfigureMcpTool("t").WithDescription("second").WithMetadata("k", "two").
		WithProperty("a", String, "A", Required).Handle(noop)
	a.ConfigureMcpTool("t").WithProperty("b", Integer.Array(), "B", false).WithTitle("Title")
	if b1 != b2 {
		t.Fatal("ConfigureMcpTool returned a different builder for the same name")
	}
	if other := a.ConfigureMcpTool("T"); other == b1 {
		t.Fatal("tool names must match case-sensitively")
	}
	a = New(nil) // without the "T" tool
	a.ConfigureMcpTool("t").WithDescription("first").WithMetadata("k", 1).WithMetadata("z", true)
	a.ConfigureMcpTool("t").WithDescription("second").WithMetadata("k", "two").WithProperty("a", String, "A", Required).Handle(noop)
	a.ConfigureMcpTool("t").WithProperty("b", Integer.Array(), "B", false).WithTitle("Title")
	tr := trigger(t, a, "t")
	desc, _ := str(t, tr, metadata.KeyDescription)
	title, _ := str(t, tr, metadata.KeyTitle)
	md, _ := str(t, tr, metadata.KeyMetadata)
	props, _ := str(t, tr, metadata.KeyToolProperties)
	if desc != "second" || title != "Title" {
		t.Errorf("description %q title %q", desc, title)
	}
	if md != `{"k":"two","z":true}` {
		t.Errorf("metadata = %s (keys must overwrite in place)", md)
	}
	assertJSONEq(t, `[{"propertyName":"a","propertyType":"string","description":"A","isRequired":true,"isArray":false,"enumValues":[]},
		{"propertyName":"b","propertyType":"integer","description":"B","isRequired":false,"isArray":true,"enumValues":[]}]`, props, "toolProperties")
	if _, ok := tr.Get(metadata.KeyInputSchema); ok {
		t.Error("inputSchema written without a schema")
	}
	if _, ok := tr.Get(metadata.KeyOutputSchema); ok {
		t.Error("outputSchema written without a schema")
	}
}

type weatherIn struct {
	City  string `json:"city" description:"The city"`
	Units string `json:"units,omitempty" enum:"celsius,fahrenheit"`
}

type weatherOut struct {
	Temp float64 `json:"temp"`
}

func weather(_ context.Context, _ *ToolContext, in weatherIn) (*Result, weatherOut, error) {
	return nil, weatherOut{Temp: 21.5}, nil
}

func TestSchemaPrecedence(t *testing.T) {
	const explicitIn = `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`
	const explicitOut = `{"type":"object","properties":{"x":{"type":"integer"}}}`
	const inferredIn = `{"type":"object","properties":{"city":{"type":"string","description":"The city"},"units":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["city"],"additionalProperties":false}`
	const inferredOut = `{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"],"additionalProperties":false}`
	tests := []struct {
		name      string
		configure func(a *App)
		in, out   string // "" = key absent
		props     string
	}{
		{"inferred", func(a *App) { AddTool(a, "t", weather) }, inferredIn, inferredOut,
			`[{"propertyName":"city","propertyType":"string","description":"The city","isRequired":true,"isArray":false,"enumValues":[]},{"propertyName":"units","propertyType":"string","description":"","isRequired":false,"isArray":false,"enumValues":["celsius","fahrenheit"]}]`},
		{"explicit after inferred", func(a *App) {
			AddTool(a, "t", weather).WithInputSchema(explicitIn).WithOutputSchema(explicitOut)
		}, explicitIn, explicitOut,
			`[{"propertyName":"q","propertyType":"string","description":"","isRequired":true,"isArray":false,"enumValues":[]}]`},
		{"explicit before inferred", func(a *App) {
			a.ConfigureMcpTool("t").WithInputSchema(explicitIn).WithOutputSchema(explicitOut)
			AddTool(a, "t", weather)
		}, explicitIn, explicitOut,
			`[{"propertyName":"q","propertyType":"string","description":"","isRequired":true,"isArray":false,"enumValues":[]}]`},
		{"last explicit wins", func(a *App) {
			a.ConfigureMcpTool("t").WithOutputSchema(`{"type":"object","properties":{"a":{}}}`).
				WithOutputSchema(`{"type":"object","properties":{"b":{}}}`).Handle(noop)
		}, "", `{"type":"object","properties":{"b":{}}}`, `[]`},
		{"declared properties beat derived ones", func(a *App) {
			AddTool(a, "t", weather).WithProperty("city", String, "declared", Required)
		}, inferredIn, inferredOut,
			`[{"propertyName":"city","propertyType":"string","description":"declared","isRequired":true,"isArray":false,"enumValues":[]}]`},
		{"raw handler has no schemas", func(a *App) { a.ConfigureMcpTool("t").Handle(noop) }, "", "", `[]`},
		{"untyped output has no output schema", func(a *App) {
			AddTool(a, "t", func(context.Context, *ToolContext, weatherIn) (*Result, any, error) { return TextResult("x"), nil, nil })
		}, inferredIn, "",
			`[{"propertyName":"city","propertyType":"string","description":"The city","isRequired":true,"isArray":false,"enumValues":[]},{"propertyName":"units","propertyType":"string","description":"","isRequired":false,"isArray":false,"enumValues":["celsius","fahrenheit"]}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := New(nil)
			tc.configure(a)
			tr := trigger(t, a, "t")
			for key, want := range map[string]string{metadata.KeyInputSchema: tc.in, metadata.KeyOutputSchema: tc.out} {
				got, ok := str(t, tr, key)
				if want == "" {
					if ok {
						t.Errorf("%s = %s, want absent", key, got)
					}
					continue
				}
				if !ok {
					t.Errorf("%s absent", key)
					continue
				}
				assertJSONEq(t, want, got, key)
			}
			if tc.in != "" != isTrue(tr, metadata.KeyUseWorkerInputSchema) {
				t.Errorf("useWorkerInputSchema = %v with inputSchema %q", isTrue(tr, metadata.KeyUseWorkerInputSchema), tc.in)
			}
			props, _ := str(t, tr, metadata.KeyToolProperties)
			assertJSONEq(t, tc.props, props, "toolProperties")
			if !isTrue(tr, metadata.KeyUseResultSchema) {
				t.Error("useResultSchema missing")
			}
		})
	}
}

func TestWrappedOutputSchema(t *testing.T) {
	tests := []struct {
		name      string
		configure func(a *App)
		want      string
	}{
		{"slice", func(a *App) {
			AddTool(a, "t", func(context.Context, *ToolContext, struct{}) (*Result, []string, error) { return nil, nil, nil })
		}, `{"type":"object","properties":{"result":{"type":"array","items":{"type":"string"}}},"required":["result"]}`},
		{"string", func(a *App) {
			AddTool(a, "t", func(context.Context, *ToolContext, struct{}) (*Result, string, error) { return nil, "", nil })
		}, `{"type":"object","properties":{"result":{"type":"string"}},"required":["result"]}`},
		{"number", func(a *App) {
			AddTool(a, "t", func(context.Context, *ToolContext, struct{}) (*Result, float64, error) { return nil, 0, nil })
		}, `{"type":"object","properties":{"result":{"type":"number"}},"required":["result"]}`},
		{"output field", func(a *App) {
			AddTool(a, "t", func(context.Context, *ToolContext, struct{}) (*Result, []int, error) { return nil, nil, nil }).WithOutputField("items")
		}, `{"type":"object","properties":{"items":{"type":"array","items":{"type":"integer"}}},"required":["items"]}`},
		{"output field before AddTool", func(a *App) {
			a.ConfigureMcpTool("t").WithOutputField("n")
			AddTool(a, "t", func(context.Context, *ToolContext, struct{}) (*Result, int, error) { return nil, 0, nil })
		}, `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"]}`},
		{"map is an object", func(a *App) {
			AddTool(a, "t", func(context.Context, *ToolContext, struct{}) (*Result, map[string]int, error) { return nil, nil, nil })
		}, `{"type":"object","additionalProperties":{"type":"integer"}}`},
		{"pointer to struct is the struct", func(a *App) {
			AddTool(a, "t", func(context.Context, *ToolContext, struct{}) (*Result, *weatherOut, error) { return nil, nil, nil })
		}, `{"type":"object","properties":{"temp":{"type":"number"}},"required":["temp"],"additionalProperties":false}`},
		{"wrapped recursive rewrites its refs", func(a *App) {
			AddTool(a, "t", func(context.Context, *ToolContext, struct{}) (*Result, []node, error) { return nil, nil, nil })
		}, `{"type":"object","properties":{"result":{"type":"array","items":{"$ref":"#/properties/result/$defs/node"},
			"$defs":{"node":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/properties/result/$defs/node"}}},"required":["name","children"],"additionalProperties":false}}}},"required":["result"]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a := New(nil)
			tc.configure(a)
			got, ok := str(t, trigger(t, a, "t"), metadata.KeyOutputSchema)
			if !ok {
				t.Fatal("outputSchema absent")
			}
			assertJSONEq(t, tc.want, got, "outputSchema")
			_, err := binding.ParseSchema(binding.OutputSchema, got)
			requireNoError(t, err, "ParseSchema of the generated schema")
		})
	}
}

type node struct {
	Name     string `json:"name"`
	Children []node `json:"children"`
}

func TestPropertiesFromSchema(t *testing.T) {
	tests := []struct {
		name, schema, want string
	}{
		{"none", `{"type":"object"}`, `[]`},
		{"scalars in order", `{"type":"object","properties":{"z":{"type":"string","description":"Z"},"a":{"type":"integer"},"m":{"type":"number"},"b":{"type":"boolean"},"o":{"type":"object"}},"required":["a",1]}`,
			`[{"propertyName":"z","propertyType":"string","description":"Z","isRequired":false,"isArray":false,"enumValues":[]},
			  {"propertyName":"a","propertyType":"integer","description":"","isRequired":true,"isArray":false,"enumValues":[]},
			  {"propertyName":"m","propertyType":"number","description":"","isRequired":false,"isArray":false,"enumValues":[]},
			  {"propertyName":"b","propertyType":"boolean","description":"","isRequired":false,"isArray":false,"enumValues":[]},
			  {"propertyName":"o","propertyType":"object","description":"","isRequired":false,"isArray":false,"enumValues":[]}]`},
		{"arrays and enums", `{"type":"object","properties":{"tags":{"type":"array","items":{"type":"string","enum":["a","b"]}},"u":{"type":"string","enum":["x",1]}}}`,
			`[{"propertyName":"tags","propertyType":"string","description":"","isRequired":false,"isArray":true,"enumValues":["a","b"]},
			  {"propertyName":"u","propertyType":"string","description":"","isRequired":false,"isArray":false,"enumValues":["x"]}]`},
		{"unknown shapes are objects", `{"type":"object","properties":{"r":{"$ref":"#/$defs/x"},"any":{},"n":{"type":"null"},"arr":{"type":"array"}}}`,
			`[{"propertyName":"r","propertyType":"object","description":"","isRequired":false,"isArray":false,"enumValues":[]},
			  {"propertyName":"any","propertyType":"object","description":"","isRequired":false,"isArray":false,"enumValues":[]},
			  {"propertyName":"n","propertyType":"object","description":"","isRequired":false,"isArray":false,"enumValues":[]},
			  {"propertyName":"arr","propertyType":"object","description":"","isRequired":false,"isArray":true,"enumValues":[]}]`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data, err := json.Marshal(propertiesFromSchema(tc.schema))
			requireNoError(t, err, "marshal")
			assertJSONEq(t, tc.want, string(data), "properties")
		})
	}
}

func TestPropertyType(t *testing.T) {
	e := String.Enum("a", "b")
	arr := e.Array()
	if String.IsArray() || len(String.EnumValues()) != 0 {
		t.Error("Enum/Array modified the String variable")
	}
	if arr.String() != "string[]" || !arr.IsArray() || arr.Name() != "string" {
		t.Errorf("arr = %v", arr)
	}
	vals := arr.EnumValues()
	vals[0] = "changed"
	if arr.EnumValues()[0] != "a" {
		t.Error("EnumValues exposes the internal slice")
	}
	for _, pt := range []PropertyType{String, Number, Integer, Boolean, Object} {
		if pt.Name() == "" {
			t.Error("a predefined type has no name")
		}
	}
}

// TestBuildCompilesEachSchemaOnce: the builders' checks, the projections and
// the rules read back from function.json share one compile per distinct
// schema text, so an app of many alike tools starts as fast as one of a few.
func TestBuildCompilesEachSchemaOnce(t *testing.T) {
	type in struct {
		N int `json:"n"`
	}
	a := New(nil)
	const tools = 10
	before := binding.CompileCount()
	for i := range tools {
		AddTool(a, "t"+string(rune('a'+i)), func(context.Context, *ToolContext, in) (*Result, []int, error) { return nil, nil, nil })
	}
	requireNoError(t, a.Build(), "Build")
	// Distinct texts: the input schema, the natural output schema and its
	// object projection. Before the shared compiler it was six per tool.
	if got := binding.CompileCount() - before; got > 3 {
		t.Errorf("Build compiled %d schemas for %d tools with the same schemas, want at most 3", got, tools)
	}
}

// TestBuildOnEveryCPUKeepsTheOrder: the tools are built on every CPU, yet
// the problems come in the builders' order, a name's problem (found before
// the build) and a build's problem (the function.json size rule) alike, and
// the functions built are those a one-CPU build makes.
func TestBuildOnEveryCPUKeepsTheOrder(t *testing.T) {
	refused := func() *App {
		a := New(nil)
		for i := range 30 {
			b := a.ConfigureMcpTool(fmt.Sprintf("tool_%02d", i)).
				WithOutputSchema(fmt.Sprintf(`{"type":"object","properties":{"n%d":{"type":"integer"}}}`, i)).Handle(noop)
			switch i % 3 {
			case 0: // the build refuses it
				b.WithDescription(strings.Repeat("x", 1<<20))
			case 2: // refused before the build
				b.WithFunctionName("bad name")
			}
		}
		return a
	}
	var want []string
	for i := range 30 {
		if i%3 != 1 {
			want = append(want, fmt.Sprintf("tool_%02d", i))
		}
	}
	built := map[int]string{}
	for _, procs := range []int{1, 4} {
		prev := runtime.GOMAXPROCS(procs)
		_, err := refused().Functions()
		runtime.GOMAXPROCS(prev)
		require.Error(t, err)
		var got []string
		for _, ce := range configErrors(t, err) {
			got = append(got, ce.Tool)
		}
		assert.Equal(t, want, got, "GOMAXPROCS %d", procs)

		ok := New(nil)
		for i := range 30 {
			ok.ConfigureMcpTool(fmt.Sprintf("tool_%02d", i)).
				WithOutputSchema(fmt.Sprintf(`{"type":"object","properties":{"n%d":{"type":"integer"}}}`, i)).Handle(noop)
		}
		prev = runtime.GOMAXPROCS(procs)
		fns, err := ok.Functions()
		runtime.GOMAXPROCS(prev)
		require.NoError(t, err)
		data, err := json.Marshal(fns)
		require.NoError(t, err)
		built[procs] = string(data)
	}
	assert.Equal(t, built[1], built[4], "the same functions, built on one CPU or four")
}
