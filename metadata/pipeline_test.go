package metadata

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testify is not importable in this module yet (its dependencies are missing
// from go.sum), so the checks use the standard library.

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run go test -update): %v", err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs (run go test -update to accept)\nwant:\n%s\ngot:\n%s", path, want, got)
	}
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

// pipelineOptions is the tool configuration every pipeline case uses.
func pipelineOptions(name string) *ToolOptions {
	switch name {
	case "t1":
		return &ToolOptions{
			ToolName:     "t1",
			Properties:   []ToolProperty{{PropertyName: "city", PropertyType: PropertyTypeString, Description: "The <city>", IsRequired: true}},
			Metadata:     []Field{{Key: "version", Value: raw(`2`)}, {Key: "source", Value: raw(`"builder"`)}},
			InputSchema:  `{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`,
			OutputSchema: `{"type":"object","properties":{"temp":{"type":"number"}}}`,
		}
	case "t2":
		return &ToolOptions{ToolName: "t2", Metadata: []Field{{Key: "version", Value: raw(`{"major":2}`)}}}
	case "t3":
		return &ToolOptions{ToolName: "t3", Metadata: []Field{{Key: "x", Value: raw(`1`)}}}
	}
	return nil
}

func TestPipelineGolden(t *testing.T) {
	ins, err := filepath.Glob(filepath.Join("testdata", "pipeline", "*.in.json"))
	if err != nil || len(ins) == 0 {
		t.Fatalf("no pipeline cases: %v", err)
	}
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), ".in.json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			fn, err := ParseFunction(name, in, data)
			if err != nil {
				t.Fatalf("ParseFunction: %v", err)
			}
			if err := Emit(fn, pipelineOptions); err != nil {
				t.Fatalf("Emit: %v", err)
			}
			out, err := fn.Encode()
			if err != nil {
				t.Fatal(err)
			}
			golden(t, strings.TrimSuffix(in, ".in.json")+".golden.json", out)
			// The pipeline is idempotent: a second run changes nothing.
			if err := Emit(fn, pipelineOptions); err != nil {
				t.Fatalf("second Emit: %v", err)
			}
			again, _ := fn.Encode()
			if !bytes.Equal(out, again) {
				t.Errorf("a second Emit changed the output:\n%s", again)
			}
		})
	}
}

// TestPipelineRules states each rule the golden files show, so that a
// careless -update cannot silently accept a regression.
func TestPipelineRules(t *testing.T) {
	run := func(t *testing.T, in string) *Function {
		t.Helper()
		fn, err := ParseFunction("f", "", []byte(in))
		if err != nil {
			t.Fatalf("ParseFunction: %v", err)
		}
		if err := Emit(fn, pipelineOptions); err != nil {
			t.Fatalf("Emit: %v", err)
		}
		return fn
	}
	keys := func(b *Binding) string {
		var ks []string
		for _, f := range b.Fields() {
			ks = append(ks, f.Key)
		}
		return strings.Join(ks, ",")
	}
	t.Run("unknown keys stay in place, new keys are appended in step order", func(t *testing.T) {
		fn := run(t, `{"bindings":[{"name":"context","custom":1,"type":"mcpToolTrigger","direction":"in","toolName":"t1","x":"y","description":null}],"scriptFile":"h"}`)
		want := "name,custom,type,direction,toolName,x,description,toolProperties,metadata,inputSchema,outputSchema,useWorkerInputSchema,useResultSchema"
		if got := keys(fn.Bindings[0]); got != want {
			t.Errorf("keys = %s\nwant   %s", got, want)
		}
		if data, _ := fn.MarshalJSON(); !strings.HasSuffix(string(data), `],"scriptFile":"h"}`) {
			t.Errorf("the other top-level keys are lost: %s", data)
		}
	})
	t.Run("non-MCP bindings are untouched", func(t *testing.T) {
		const http = `{"type":"httpTrigger","direction":"in","name":"req","methods":["get"]}`
		fn := run(t, `{"bindings":[`+http+`,{"type":"mcpToolTrigger","direction":"in","name":"c","toolName":"t1","description":""}]}`)
		got, _ := fn.Bindings[0].MarshalJSON()
		if string(got) != http {
			t.Errorf("http binding = %s", got)
		}
	})
	t.Run("binding types are matched exactly", func(t *testing.T) {
		fn := run(t, `{"bindings":[{"type":"McpToolTrigger","direction":"in","name":"c","toolName":"t1","description":""}]}`)
		if _, ok := fn.Bindings[0].Get(KeyToolProperties); ok {
			t.Error("a McpToolTrigger binding was processed")
		}
	})
	t.Run("metadata merges over a string", func(t *testing.T) {
		fn := run(t, `{"bindings":[{"type":"mcpToolTrigger","direction":"in","name":"c","toolName":"t1","description":"","metadata":"{\"author\":\"J\",\"version\":1.0}"}]}`)
		md, _ := fn.Bindings[0].LookupString(KeyMetadata)
		if md != `{"author":"J","version":2,"source":"builder"}` {
			t.Errorf("metadata = %s", md)
		}
	})
	t.Run("metadata merges over an object and is written as a string", func(t *testing.T) {
		fn := run(t, `{"bindings":[{"type":"mcpToolTrigger","direction":"in","name":"c","toolName":"t2","description":"","metadata":{"keep":true,"version":0}}]}`)
		md, ok := fn.Bindings[0].LookupString(KeyMetadata)
		if !ok || md != `{"keep":true,"version":{"major":2}}` {
			t.Errorf("metadata = %s (string: %v)", md, ok)
		}
	})
	t.Run("malformed metadata is replaced", func(t *testing.T) {
		fn := run(t, `{"bindings":[{"type":"mcpToolTrigger","direction":"in","name":"c","toolName":"t3","description":"","metadata":"{not json"}]}`)
		md, _ := fn.Bindings[0].LookupString(KeyMetadata)
		if md != `{"x":1}` {
			t.Errorf("metadata = %s", md)
		}
	})
	t.Run("an out binding suppresses useResultSchema", func(t *testing.T) {
		fn := run(t, `{"bindings":[{"type":"mcpToolTrigger","direction":"in","name":"c","toolName":"t1","description":""},{"type":"queue","direction":"Out","name":"q"}]}`)
		if _, ok := fn.Bindings[0].Get(KeyUseResultSchema); ok {
			t.Error("useResultSchema written although the function has an out binding")
		}
		if _, ok := fn.Bindings[0].Get(KeyOutputSchema); !ok {
			t.Error("outputSchema is independent of useResultSchema")
		}
	})
	t.Run("flags are never written as false and outputSchema is absent when none", func(t *testing.T) {
		fn := run(t, `{"bindings":[{"type":"mcpToolTrigger","direction":"in","name":"c","toolName":"t2","description":""}]}`)
		b := fn.Bindings[0]
		for _, k := range []string{KeyUseWorkerInputSchema, KeyOutputSchema, KeyInputSchema, KeyToolProperties} {
			if v, ok := b.Get(k); ok {
				t.Errorf("%s = %s, want absent", k, v)
			}
		}
		if v, _ := b.Get(KeyUseResultSchema); string(v) != "true" {
			t.Errorf("useResultSchema = %s", v)
		}
	})
	t.Run("schemas and properties are strings", func(t *testing.T) {
		fn := run(t, `{"bindings":[{"type":"mcpToolTrigger","direction":"in","name":"c","toolName":"t1","description":""}]}`)
		for _, k := range []string{KeyToolProperties, KeyMetadata, KeyInputSchema, KeyOutputSchema} {
			if _, ok := fn.Bindings[0].LookupString(k); !ok {
				t.Errorf("%s is not a string", k)
			}
		}
		props, _ := fn.Bindings[0].LookupString(KeyToolProperties)
		if !strings.Contains(props, `"description":"The <city>"`) || !strings.Contains(props, `"enumValues":[]`) {
			t.Errorf("toolProperties = %s", props)
		}
	})
	t.Run("a trigger without toolName is an error naming the function", func(t *testing.T) {
		fn, err := ParseFunction("f", "", []byte(`{"bindings":[{"type":"mcpToolTrigger","direction":"in","name":"c"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		err = Emit(fn, pipelineOptions)
		var fe *FunctionError
		if !errors.As(err, &fe) || fe.Function != "f" || !strings.Contains(err.Error(), "toolName") {
			t.Errorf("err = %v", err)
		}
	})
}

func TestNewToolFunction(t *testing.T) {
	fn, err := NewToolFunction("get_weather", &ToolOptions{ToolName: "GetWeather", Description: "d", Title: "T", Properties: []ToolProperty{}})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := fn.Encode()
	golden(t, filepath.Join("testdata", "new_tool_function.golden.json"), data)
	if _, err := NewToolFunction("host", &ToolOptions{ToolName: "x"}); err == nil {
		t.Error("NewToolFunction accepted the reserved name host")
	}
	var fe *FunctionError
	if _, err := NewToolFunction("", &ToolOptions{ToolName: "x"}); !errors.As(err, &fe) {
		t.Errorf("err = %v, want *FunctionError", err)
	}
}

func TestValidateFunctionName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
		msg  string
	}{
		{"a", true, ""},
		{"GetWeather", true, ""},
		{"get_weather-2", true, ""},
		{"a" + strings.Repeat("b", 127), true, ""},
		{"a" + strings.Repeat("b", 128), false, "at most 128"},
		{"", false, "must start with a letter"},
		{"1abc", false, "must start with a letter"},
		{"_abc", false, "must start with a letter"},
		{"get.weather", false, "letters, digits"},
		{"get weather", false, "letters, digits"},
		{"host", false, "reserved"},
		{"HOST", false, "reserved"},
		{"hosts", true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidateFunctionName(tc.name)
			if tc.ok != (err == nil) {
				t.Fatalf("ValidateFunctionName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
			}
			if err != nil && !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("message %q lacks %q", err, tc.msg)
			}
		})
	}
}

func TestParseFunctionErrors(t *testing.T) {
	tests := []struct{ name, data, msg string }{
		{"not JSON", `{`, "parsing"},
		{"not an object", `[]`, "must hold a JSON object"},
		{"bindings not array", `{"bindings":{}}`, `"bindings" must be a JSON array`},
		{"binding not object", `{"bindings":[1]}`, "binding 0"},
		{"no bindings", `{"bindings":[]}`, "at least one binding"},
		{"no type", `{"bindings":[{"name":"a","direction":"in"}]}`, "has no type"},
		{"bad binding name", `{"bindings":[{"type":"x","name":"1a"}]}`, "not a valid binding name"},
		{"$return in", `{"bindings":[{"type":"x","name":"$return","direction":"in"}]}`, `must have direction "out"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFunction("fn", "fn/function.json", []byte(tc.data))
			var fe *FunctionError
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want *FunctionError", err)
			}
			if fe.Function != "fn" || fe.File != "fn/function.json" || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %v, want it to name fn, the file and %q", err, tc.msg)
			}
		})
	}
}

func TestWriteAndReadApp(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"b_tool", "a_tool"} {
		fn, err := NewToolFunction(name, &ToolOptions{ToolName: name, OutputSchema: `{"type":"object"}`})
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteFunction(root, fn); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(root, "not_a_function"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "broken"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "broken", FunctionFile), []byte(`{"bindings":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	fns, errs, err := ReadApp(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(fns) != 2 || fns[0].Name != "a_tool" || fns[1].Name != "b_tool" {
		t.Errorf("functions = %v", fns)
	}
	var fe *FunctionError
	if len(errs) != 1 || !errors.As(errs[0], &fe) || fe.Function != "broken" {
		t.Errorf("errs = %v", errs)
	}
	if s, _ := fns[0].Bindings[0].LookupString(KeyOutputSchema); s != `{"type":"object"}` {
		t.Errorf("outputSchema = %q", s)
	}
	if err := WriteFunction(root, &Function{Name: "x"}); !errors.Is(err, ErrNoBindings) {
		t.Errorf("WriteFunction without bindings = %v", err)
	}
}

func TestReadAppGuards(t *testing.T) {
	root := t.TempDir()
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name, FunctionFile), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	good := []byte(`{"bindings":[{"type":"httpTrigger","direction":"in","name":"req"}]}`)
	write("good", good)
	write("large", append(good, bytes.Repeat([]byte(" "), 100)...))
	if err := os.MkdirAll(filepath.Join(root, "folder", FunctionFile), 0o755); err != nil {
		t.Fatal(err)
	}
	// Links: a function.json linking outside the app, a function folder
	// linking outside it, and a link inside the app (allowed).
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, FunctionFile), good, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "linkout"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, link := range [][2]string{
		{filepath.Join(outside, FunctionFile), filepath.Join(root, "linkout", FunctionFile)},
		{outside, filepath.Join(root, "dirout")},
		{filepath.Join(root, "good"), filepath.Join(root, "samegood")},
	} {
		if err := os.Symlink(link[0], link[1]); err != nil {
			t.Fatal(err)
		}
	}
	fns, errs, err := ReadApp(root, &ReadOptions{MaxFileBytes: int64(len(good))})
	if err != nil {
		t.Fatal(err)
	}
	if len(fns) != 2 || fns[0].Name != "good" || fns[1].Name != "samegood" {
		t.Errorf("functions = %v", fns)
	}
	want := map[string]string{"folder": "not a regular file (a directory)", "large": "more than the limit of",
		"linkout": "a link to a file outside the app folder: not read", "dirout": "a link to a file outside the app folder: not read"}
	if len(errs) != len(want) {
		t.Fatalf("errs = %v", errs)
	}
	for _, e := range errs {
		var fe *FunctionError
		if !errors.As(e, &fe) || !strings.Contains(e.Error(), want[fe.Function]) || !strings.HasSuffix(fe.File, FunctionFile) {
			t.Errorf("error %v: want it to name the file and say %q", e, want[fe.Function])
		}
	}
}

func TestBindingLookup(t *testing.T) {
	var b Binding
	if err := json.Unmarshal([]byte(`{"Type":"mcpToolTrigger","toolname":"x","toolName":"exact","flag":true,"nul":null,"n":1,"dup":1,"dup":2}`), &b); err != nil {
		t.Fatal(err)
	}
	if s, _ := b.LookupString("TOOLNAME"); s != "x" {
		t.Errorf("case-insensitive lookup = %q", s)
	}
	if s, _ := b.LookupString("toolName"); s != "exact" {
		t.Errorf("exact match must win: %q", s)
	}
	if !b.IsType(TypeMcpToolTrigger) || b.Type() != "mcpToolTrigger" {
		t.Error("type lookup")
	}
	if _, ok := b.LookupString("nul"); ok {
		t.Error("null is not a string")
	}
	if v, _ := b.Get("dup"); string(v) != "2" {
		t.Errorf("repeated key keeps the last value: %s", v)
	}
	if err := b.SetRaw("bad", json.RawMessage(`{`)); err == nil {
		t.Error("SetRaw accepted invalid JSON")
	}
	out, _ := b.MarshalJSON()
	if string(out) != `{"Type":"mcpToolTrigger","toolname":"x","toolName":"exact","flag":true,"nul":null,"n":1,"dup":2}` {
		t.Errorf("marshal = %s", out)
	}
}

func TestDecodeToolInvocationContext(t *testing.T) {
	const obj = `{"name":"t","arguments":{"city":"Oslo"},"sessionid":"s","clientinfo":{"name":"c","version":"1"},"transport":{"name":"http-sse","properties":{"headers":{"X-A":"b"}}}}`
	enc := func(s string, n int) string {
		for i := 0; i < n; i++ {
			d, _ := json.Marshal(s)
			s = string(d)
		}
		return s
	}
	for depth := 0; depth <= 3; depth++ {
		c, err := DecodeToolInvocationContext([]byte(enc(obj, depth)))
		if err != nil {
			t.Fatalf("depth %d: %v", depth, err)
		}
		if c.Name != "t" || string(c.Arguments["city"]) != `"Oslo"` || c.ClientInfo.Name != "c" || c.SessionID != "s" {
			t.Errorf("depth %d: %+v", depth, c)
		}
		if string(c.RawArguments) != `{"city":"Oslo"}` {
			t.Errorf("depth %d: raw arguments %s", depth, c.RawArguments)
		}
		if v, ok := c.Argument("CITY"); !ok || string(v) != `"Oslo"` {
			t.Errorf("case-insensitive argument: %s %v", v, ok)
		}
		if h, ok := c.Transport.Header("x-a"); !ok || h != "b" {
			t.Errorf("header: %q %v", h, ok)
		}
	}
	for _, noArgs := range []string{`{"name":"t"}`, `{"name":"t","arguments":null}`} {
		if c, err := DecodeToolInvocationContext([]byte(noArgs)); err != nil || c.Arguments != nil || c.RawArguments != nil {
			t.Errorf("%s: %+v %v", noArgs, c, err)
		}
	}
	for _, bad := range []string{enc(obj, 9), `"plain text"`, `[1]`, `5`, `{"name":`, `{"name":"t","arguments":[1]}`} {
		if _, err := DecodeToolInvocationContext([]byte(bad)); err == nil {
			t.Errorf("accepted %.40s", bad)
		}
	}
	req := &InvocationRequest{Data: map[string]json.RawMessage{"Context": json.RawMessage(enc(obj, 2))}}
	if c, err := ToolContextFromRequest(req, TriggerBindingName); err != nil || c.Name != "t" {
		t.Errorf("ToolContextFromRequest = %v, %v", c, err)
	}
	if _, err := ToolContextFromRequest(&InvocationRequest{}, TriggerBindingName); err == nil {
		t.Error("a request without the context was accepted")
	}
}

func TestToolResultContent(t *testing.T) {
	if got := string(TextContent(`a "b" <c>`)); got != `{"type":"text","text":"a \"b\" <c>"}` {
		t.Errorf("TextContent = %s", got)
	}
	if got := string(ImageContent("AAE=", "image/png")); got != `{"type":"image","data":"AAE=","mimeType":"image/png"}` {
		t.Errorf("ImageContent = %s", got)
	}
	if ContentType(AudioContent("", "audio/wav")) != "audio" || ContentType(json.RawMessage(`[]`)) != "" {
		t.Error("ContentType")
	}
	p, _ := json.Marshal(ToolProperty{PropertyName: "a", PropertyType: "string"})
	if string(p) != `{"propertyName":"a","propertyType":"string","description":"","isRequired":false,"isArray":false,"enumValues":[]}` {
		t.Errorf("ToolProperty = %s", p)
	}
}

func TestNaturalOutputSchemaKey(t *testing.T) {
	opts := &ToolOptions{
		ToolName:            "primes",
		OutputSchema:        `{"type":"object","properties":{"result":{"type":"array"}},"required":["result"]}`,
		NaturalOutputSchema: `{"type":"array"}`,
	}
	fn, err := NewToolFunction("primes", opts)
	if err != nil {
		t.Fatal(err)
	}
	data, err := fn.Encode()
	if err != nil {
		t.Fatal(err)
	}
	out, natural := strings.Index(string(data), `"outputSchema"`), strings.Index(string(data), `"naturalOutputSchema"`)
	if out < 0 || natural < out {
		t.Errorf("naturalOutputSchema must follow outputSchema:\n%s", data)
	}
	if s, _ := fn.Bindings[0].LookupString(KeyNaturalOutputSchema); s != `{"type":"array"}` {
		t.Errorf("naturalOutputSchema = %q", s)
	}

	opts.NaturalOutputSchema = ""
	fn, err = NewToolFunction("primes", opts)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := fn.Bindings[0].Get(KeyNaturalOutputSchema); ok {
		t.Errorf("naturalOutputSchema = %s, want absent when the output schema is natural", v)
	}
}

// TestTextContentIsMarshal: the hand-written text block is the bytes
// Marshal writes for it, escapes and invalid UTF-8 included.
func TestTextContentIsMarshal(t *testing.T) {
	for _, text := range []string{"", "plain", `a "b" <c> & d`, "tab\there\nnew\\line", "\u2028\u2029", "bad \xff\xfe utf-8", "\x00\x1f", strings.Repeat(`{"k":"v"}`, 300)} {
		want, err := Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{"text", text})
		if err != nil {
			t.Fatal(err)
		}
		if got := TextContent(text); string(got) != string(want) {
			t.Errorf("TextContent(%q) = %s, want %s", text, got, want)
		}
	}
}

// TestTextContentAllocatesOnce: a JSON text mirror, quotes and all, is
// one allocation.
func TestTextContentAllocatesOnce(t *testing.T) {
	text := strings.Repeat(`{"date":"2026-03-01","high":-1.3,"note":"a \\ b"},`, 20)
	if n := testing.AllocsPerRun(20, func() { _ = TextContent(text) }); n != 1 {
		t.Errorf("TextContent allocates %v times, want 1", n)
	}
}

// toolPropertiesByReflection is how toolProperties was encoded before
// AppendToolProperties: encoding/json over the plain struct (no HTML
// escaping), enumValues [] when nil.
func toolPropertiesByReflection(t testing.TB, props []ToolProperty) string {
	t.Helper()
	type plain ToolProperty
	var list []plain
	if props != nil {
		list = []plain{}
	}
	for _, p := range props {
		if p.EnumValues == nil {
			p.EnumValues = []string{}
		}
		list = append(list, plain(p))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(list); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// TestAppendToolPropertiesIsReflection: toolProperties and a property's
// MarshalJSON are written byte for byte as encoding/json wrote them.
func TestAppendToolPropertiesIsReflection(t *testing.T) {
	odd := "<a & b>\u2028\u2029\"\\\x00\x1f\xff é"
	for _, props := range [][]ToolProperty{
		nil,
		{},
		{{PropertyName: "city", PropertyType: PropertyTypeString, Description: "The city.", IsRequired: true}},
		{{PropertyName: odd, PropertyType: odd, Description: odd, IsArray: true, EnumValues: []string{odd, "", "b"}},
			{PropertyName: "e", EnumValues: []string{}}, {}},
	} {
		want := toolPropertiesByReflection(t, props)
		if got := string(AppendToolProperties(nil, props)); got != want {
			t.Errorf("AppendToolProperties\n got %s\nwant %s", got, want)
		}
		for i, p := range props {
			one := toolPropertiesByReflection(t, []ToolProperty{p})
			got, err := p.MarshalJSON()
			if err != nil || string(got) != one[1:len(one)-1] {
				t.Errorf("property %d MarshalJSON = %s, %v; want %s", i, got, err, one[1:len(one)-1])
			}
		}
	}
}

func FuzzAppendToolProperties(f *testing.F) {
	f.Add("city", "string", "The city.", true, false, "a", "b")
	f.Add("<&>", "\u2028", "\xff\x00", false, true, "", "\"\\")
	f.Fuzz(func(t *testing.T, name, typ, desc string, required, array bool, e1, e2 string) {
		props := []ToolProperty{{PropertyName: name, PropertyType: typ, Description: desc, IsRequired: required, IsArray: array, EnumValues: []string{e1, e2}},
			{PropertyName: e1, Description: e2, IsArray: required}}
		if want, got := toolPropertiesByReflection(t, props), string(AppendToolProperties(nil, props)); got != want {
			t.Fatalf("got %s\nwant %s", got, want)
		}
	})
}
