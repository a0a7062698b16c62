package binding

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

func TestLoadPrompt(t *testing.T) {
	fn, b := resourceBinding(t, "trip", `{"name":"context","Type":"mcpPromptTrigger","PromptName":"plan_trip","Title":"Plan",
		"Description":"d","PromptArguments":"[{\"NAME\":\"city\",\"description\":\"Where\",\"Required\":true},{\"name\":\"days\",\"title\":\"Days\",\"description\":null}]",
		"Icons":"[{\"src\":\"data:image/png;base64,AA==\",\"sizes\":[\"16x16\",\"any\"],\"theme\":\"light\"}]",
		"metadata":{"k":"v"},"useResultSchema":true,"completions":"{\"city\":{\"values\":[\"Paris\"]},\"days\":{\"dynamic\":true}}"}`)
	fn.Bindings = append(fn.Bindings, mustBinding(t, `{"name":"cityArg","type":"mcpPromptArgument","direction":"in","argumentName":"city","isRequired":true}`))
	p, err := LoadPrompt(fn, b, "")
	require.NoError(t, err)
	assert.Equal(t, "plan_trip", p.Name)
	assert.Equal(t, []metadata.PromptArgument{{Name: "city", Description: "Where", Required: true}, {Name: "days", Title: "Days"}}, p.Arguments)
	assert.Equal(t, []string{"city"}, p.Required())
	assert.True(t, p.UseResultSchema)
	assert.Equal(t, []PromptArgumentBinding{{Name: "cityArg", Argument: "city", Required: true}}, p.ArgumentBindings)
	src, ok := p.Completion("days")
	assert.True(t, ok)
	assert.True(t, src.Dynamic)
	_, ok = p.Completion("nope")
	assert.False(t, ok)
	assert.Equal(t, `{"name":"plan_trip","title":"Plan","description":"d","arguments":[{"name":"city","description":"Where","required":true},{"name":"days","title":"Days","required":false}],"icons":[{"src":"data:image/png;base64,AA==","sizes":["16x16","any"],"theme":"light"}],"_meta":{"k":"v"}}`,
		string(p.ListEntry()))

	assert.Equal(t, []string{"city"}, p.MissingArguments(nil))
	assert.Equal(t, []string{"city"}, p.MissingArguments(map[string]json.RawMessage{"city": json.RawMessage(`null`)}))
	assert.Equal(t, []string{"city"}, p.MissingArguments(map[string]json.RawMessage{"City": json.RawMessage(`"x"`)}), "names match exactly")
	assert.Nil(t, p.MissingArguments(map[string]json.RawMessage{"city": json.RawMessage(`""`)}), "an empty string is a value")
	assert.Equal(t, "One or more required prompt arguments are missing values. Please provide: a, b", MissingPromptArgumentsMessage([]string{"a", "b"}))

	_, b = resourceBinding(t, "simple", `{"name":"context","type":"mcpPromptTrigger","promptName":"simple"}`)
	p, err = LoadPrompt(nil, b, "")
	require.NoError(t, err)
	assert.Nil(t, p.Arguments)
	assert.Equal(t, `{"name":"simple"}`, string(p.ListEntry()), "no arguments key without promptArguments")
}

func mustBinding(t *testing.T, s string) *metadata.Binding {
	t.Helper()
	var b metadata.Binding
	require.NoError(t, b.UnmarshalJSON([]byte(s)))
	return &b
}

func TestLoadPromptErrors(t *testing.T) {
	for _, tc := range []struct {
		name, binding string
		extra         string // another binding of the function
		want          []string
	}{
		{name: "no name", binding: `{"type":"mcpPromptTrigger"}`, want: []string{"promptName is missing"}},
		{name: "blank name", binding: `{"type":"mcpPromptTrigger","promptName":"  "}`, want: []string{"promptName is empty"}},
		{name: "arguments not a string", binding: `{"type":"mcpPromptTrigger","promptName":"p","promptArguments":[]}`, want: []string{"promptArguments must be a string holding a JSON array"}},
		{name: "arguments not an array", binding: `{"type":"mcpPromptTrigger","promptName":"p","promptArguments":"{}"}`, want: []string{"JSON array of prompt arguments"}},
		{name: "argument without name", binding: `{"type":"mcpPromptTrigger","promptName":"p","promptArguments":"[{\"required\":true}]"}`, want: []string{"promptArguments[0]: the name is missing or blank"}},
		{name: "argument twice", binding: `{"type":"mcpPromptTrigger","promptName":"p","promptArguments":"[{\"name\":\"a\"},{\"name\":\"a\"}]"}`, want: []string{`argument "a" is declared twice`}},
		{name: "required not a boolean", binding: `{"type":"mcpPromptTrigger","promptName":"p","promptArguments":"[{\"name\":\"a\",\"required\":\"yes\"}]"}`, want: []string{"promptArguments[0].required has the wrong type"}},
		{name: "icons without src", binding: `{"type":"mcpPromptTrigger","promptName":"p","icons":"[{}]"}`, want: []string{"icons[0]: src is missing"}},
		{name: "icon bad mime", binding: `{"type":"mcpPromptTrigger","promptName":"p","icons":"[{\"src\":\"https://a/b\",\"mimeType\":\"png\"}]"}`, want: []string{"icons[0]: mimeType"}},
		{name: "useResultSchema string", binding: `{"type":"mcpPromptTrigger","promptName":"p","useResultSchema":"true"}`, want: []string{"useResultSchema must be a boolean"}},
		{name: "completion of an undeclared argument", binding: `{"type":"mcpPromptTrigger","promptName":"p","completions":"{\"x\":{\"values\":[]}}"}`, want: []string{`"x" is not an argument of the prompt`}},
		{name: "completions not an object", binding: `{"type":"mcpPromptTrigger","promptName":"p","completions":"[]"}`, want: []string{"completions must be a string holding a JSON object"}},
		{name: "argument binding without name", binding: `{"type":"mcpPromptTrigger","promptName":"p"}`, extra: `{"name":"a","type":"mcpPromptArgument","direction":"in"}`,
			want: []string{"binding 1 (mcpPromptArgument): argumentName is missing"}},
		{name: "every problem", binding: `{"type":"mcpPromptTrigger","title":5,"description":[],"metadata":"x"}`,
			want: []string{"promptName is missing", "title must be a string", "description must be a string", "metadata is not valid JSON"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fn, b := resourceBinding(t, "p", tc.binding)
			if tc.extra != "" {
				fn.Bindings = append(fn.Bindings, mustBinding(t, tc.extra))
			}
			_, err := LoadPrompt(fn, b, "")
			var le *LoadError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, KindPrompt, le.Kind)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Equal(t, len(tc.want), strings.Count(err.Error(), `function "p"`), "one line per problem: %v", err)
		})
	}
}

// TestPromptDecodeReturnValue models the extension's PromptReturnValueBinder
// (with useResultSchema) and SimplePromptReturnValueBinder (without).
func TestPromptDecodeReturnValue(t *testing.T) {
	envelope := func(content, typ string) string {
		inner, _ := json.Marshal(map[string]string{"content": content, "type": typ})
		outer, _ := json.Marshal(string(inner))
		return string(outer)
	}
	const image = `{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}`
	const resource = `{"type":"resource","resource":{"uri":"test://example-resource","mimeType":"text/plain","text":"x"}}`
	withSchema := &Prompt{UseResultSchema: true}
	for _, tc := range []struct {
		name, raw, want, err string
		p                    *Prompt
	}{
		{name: "null", raw: `null`, want: `{"messages":[]}`},
		{name: "get_prompt_result", raw: envelope(`{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"_meta":{"a":1}}`, "get_prompt_result"),
			want: `{"description":"d","messages":[{"role":"user","content":{"type":"text","text":"hi"}}],"_meta":{"a":1}}`},
		{name: "type compared case-insensitively", raw: envelope(`{"messages":[]}`, "GET_PROMPT_RESULT"), want: `{"messages":[]}`},
		{name: "prompt_messages", raw: envelope(`[{"role":"user","content":`+image+`},{"role":"assistant","content":`+resource+`}]`, "prompt_messages"),
			want: `{"messages":[{"role":"user","content":` + image + `},{"role":"assistant","content":` + resource + `}]}`},
		{name: "envelope as an object", raw: `{"Type":"prompt_messages","Content":"[]"}`, want: `{"messages":[]}`},
		{name: "content compacted", raw: envelope(`[{"role":"user","content":{ "type" : "text", "text": "x" }}]`, "prompt_messages"),
			want: `{"messages":[{"role":"user","content":{"type":"text","text":"x"}}]}`},
		{name: "unknown type", raw: envelope(`{}`, "text"), err: `unknown prompt result type "text"`},
		{name: "no type", raw: `"{\"content\":\"{}\"}"`, err: "no string type"},
		{name: "content null", raw: `"{\"type\":\"get_prompt_result\",\"content\":null}"`, err: "content is null"},
		{name: "content not JSON", raw: envelope(`nope`, "get_prompt_result"), err: "not a JSON object"},
		{name: "messages null", raw: envelope(`null`, "prompt_messages"), err: "JSON array of prompt messages"},
		{name: "bad role", raw: envelope(`[{"role":"system","content":{"type":"text","text":"x"}}]`, "prompt_messages"), err: `message 0: role "system"`},
		{name: "bad block", raw: envelope(`[{"role":"user","content":{"type":"image","data":"x"}}]`, "prompt_messages"), err: `message 0: the "image" block needs a string "mimeType"`},
		{name: "no content", raw: envelope(`[{"role":"user"}]`, "prompt_messages"), err: "the content is missing"},
		{name: "not an envelope", raw: `"hello"`, err: "not a prompt result envelope"},
		{name: "simple: a string", p: &Prompt{}, raw: `"hello"`, want: `{"messages":[{"role":"user","content":{"type":"text","text":"hello"}}]}`},
		{name: "simple: JSON text", p: &Prompt{}, raw: `{"a": 1}`, want: `{"messages":[{"role":"user","content":{"type":"text","text":"{\"a\":1}"}}]}`},
		{name: "simple: null", p: &Prompt{}, raw: `null`, want: `{"messages":[]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.p
			if p == nil {
				p = withSchema
			}
			res, err := p.DecodeReturnValue(json.RawMessage(tc.raw))
			if tc.err != "" {
				var rve *ReturnValueError
				require.ErrorAs(t, err, &rve)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			data, err := metadata.Marshal(res)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(data))
		})
	}
}

func TestCompleteValues(t *testing.T) {
	values := []string{"paris", "Park City", "party", "Oslo"}
	res := CompleteValues(values, "PAR")
	assert.Equal(t, []string{"paris", "Park City", "party"}, res.Completion.Values, "prefix compared case-insensitively, order kept")
	assert.Equal(t, 3, *res.Completion.Total)
	assert.False(t, res.Completion.HasMore)
	res = CompleteValues(values, "")
	assert.Equal(t, values, res.Completion.Values)
	res = CompleteValues(values, "test")
	assert.Equal(t, []string{}, res.Completion.Values, "no match: an empty list, never null")

	many := make([]string, 150)
	for i := range many {
		many[i] = fmt.Sprintf("v%03d", i)
	}
	res = CompleteValues(many, "v")
	assert.Len(t, res.Completion.Values, metadata.MaxCompletionValues)
	assert.Equal(t, 150, *res.Completion.Total)
	assert.True(t, res.Completion.HasMore)
	res = CompleteResultOf(many[:3])
	assert.Equal(t, many[:3], res.Completion.Values)
	assert.False(t, res.Completion.HasMore)
}

func TestDecodeCompletionReturnValue(t *testing.T) {
	res, err := DecodeCompletionReturnValue(json.RawMessage(`"{\"completion\":{\"values\":[\"a\"],\"total\":4,\"hasMore\":true}}"`))
	require.NoError(t, err)
	assert.Equal(t, []string{"a"}, res.Completion.Values)
	assert.Equal(t, 4, *res.Completion.Total)
	assert.True(t, res.Completion.HasMore)
	res, err = DecodeCompletionReturnValue(json.RawMessage(`{"completion":{"values":[]}}`))
	require.NoError(t, err)
	assert.Empty(t, res.Completion.Values)
	for _, bad := range []string{`null`, `"x"`, `{"completion":{"values":[1]}}`, `{}`,
		`{"completion":{"values":[` + strings.TrimSuffix(strings.Repeat(`"x",`, 101), ",") + `]}}`} {
		_, err := DecodeCompletionReturnValue(json.RawMessage(bad))
		assert.Error(t, err, bad)
	}
}

func TestRegistry(t *testing.T) {
	var reg Registry
	static := mustResource(t, "text", "test://static-text")
	tmpl := mustResource(t, "tmpl", "test://template/{id}/data")
	require.NoError(t, reg.AddResource(static))
	require.NoError(t, reg.AddResource(tmpl))
	err := reg.AddResource(mustResource(t, "again", "TEST://STATIC-TEXT"))
	var de *DuplicateError
	require.ErrorAs(t, err, &de)
	assert.Equal(t, KindResource, de.Kind)
	assert.Contains(t, err.Error(), `already registered by function "text"`)

	r, vars, ok := reg.LookupResource("test://Static-Text")
	require.True(t, ok)
	assert.Same(t, static, r)
	assert.Nil(t, vars)
	r, vars, ok = reg.LookupResource("test://template/9/data")
	require.True(t, ok)
	assert.Same(t, tmpl, r)
	assert.Equal(t, map[string]string{"id": "9"}, vars)
	_, _, ok = reg.LookupResource("test://nothing")
	assert.False(t, ok)
	got, ok := reg.Template("test://TEMPLATE/{id}/data")
	assert.True(t, ok)
	assert.Same(t, tmpl, got)
	assert.Equal(t, []*Resource{static}, reg.Resources())
	assert.Equal(t, []*Resource{tmpl}, reg.Templates())

	prompt := func(name string) *Prompt {
		_, b := resourceBinding(t, "f_"+name, `{"name":"context","type":"mcpPromptTrigger","promptName":`+quote(name)+`}`)
		p, err := LoadPrompt(&metadata.Function{Name: "f_" + name}, b, "")
		require.NoError(t, err)
		return p
	}
	a := prompt("review")
	require.NoError(t, reg.AddPrompt(a))
	require.NoError(t, reg.AddPrompt(prompt("other")))
	err = reg.AddPrompt(prompt("Review"))
	require.ErrorAs(t, err, &de)
	assert.Equal(t, KindPrompt, de.Kind)
	assert.Contains(t, err.Error(), `prompt "Review" is already registered by function "f_review"`)
	p, ok := reg.Prompt("REVIEW")
	assert.True(t, ok)
	assert.Same(t, a, p)
	assert.Len(t, reg.Prompts(), 2)
}

func TestToolTriggerAnnotationsAndIcons(t *testing.T) {
	fn := testFunction(mustBinding(t, `{"name":"context","type":"mcpToolTrigger","toolName":"t","description":null,
		"annotations":"{\"title\":\"T\",\"readOnlyHint\":true}","icons":"[{\"src\":\"https://a/i.png\"}]"}`))
	tr, err := ParseTrigger(fn, fn.Bindings[0], "")
	require.NoError(t, err)
	assert.Equal(t, `{"title":"T","readOnlyHint":true}`, string(tr.Annotations))
	assert.Equal(t, []metadata.Icon{{Src: "https://a/i.png"}}, tr.Icons)

	for bad, want := range map[string]string{
		`"annotations":"{\"readOnly\":true}"`:      `"readOnly" is not a tool annotation`,
		`"annotations":"{\"readOnlyHint\":\"y\"}"`: `"readOnlyHint" has the wrong type`,
		`"annotations":"[1]"`:                      "annotations must be a string holding a JSON object",
		`"annotations":{}`:                         "annotations must be a string holding a JSON object",
		`"icons":"[{\"src\":\"ftp://x/y\"}]"`:      "https:, http: or data:",
	} {
		fn := testFunction(mustBinding(t, `{"name":"context","type":"mcpToolTrigger","toolName":"t","description":null,`+bad+`}`))
		_, err := ParseTrigger(fn, fn.Bindings[0], "")
		var te *ToolError
		require.ErrorAs(t, err, &te, bad)
		assert.Contains(t, err.Error(), want)
	}
	fn = testFunction(mustBinding(t, `{"name":"context","type":"mcpToolTrigger","toolName":"t","description":null,"annotations":"{}"}`))
	tr, err = ParseTrigger(fn, fn.Bindings[0], "")
	require.NoError(t, err)
	assert.Nil(t, tr.Annotations, "an empty object means none")
}
