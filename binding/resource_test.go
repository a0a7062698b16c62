package binding

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// resourceBinding wraps one binding in a function called function.
func resourceBinding(t *testing.T, function, binding string) (*metadata.Function, *metadata.Binding) {
	t.Helper()
	var b metadata.Binding
	require.NoError(t, b.UnmarshalJSON([]byte(binding)))
	return &metadata.Function{Name: function, Bindings: []*metadata.Binding{&b}}, &b
}

func TestLoadResource(t *testing.T) {
	fn, b := resourceBinding(t, "static_text", `{"Name":"context","TYPE":"McpResourceTrigger","direction":"in",
		"URI":"test://static-text","ResourceName":"static-text","Title":"Static","Description":"d","MimeType":"text/plain",
		"Size":49,"Metadata":"{\"a\":1}","Icons":"[{\"SRC\":\"https://e.com/i.png\",\"mimetype\":\"image/png\"}]"}`)
	r, err := LoadResource(fn, b, "f.json")
	require.NoError(t, err, "keys match case-insensitively")
	assert.Equal(t, "context", r.Binding)
	assert.Equal(t, "test://static-text", r.URI)
	assert.Equal(t, "static-text", r.Name)
	assert.Equal(t, "Static", r.Title)
	assert.Equal(t, "text/plain", r.MimeType)
	require.NotNil(t, r.Size)
	assert.EqualValues(t, 49, *r.Size)
	assert.JSONEq(t, `{"a":1}`, string(r.Metadata))
	assert.Equal(t, []metadata.Icon{{Src: "https://e.com/i.png", MimeType: "image/png"}}, r.Icons)
	assert.Nil(t, r.Template)
	assert.Equal(t, KindResource, r.Kind())
	assert.Equal(t, `{"name":"static-text","title":"Static","uri":"test://static-text","description":"d","mimeType":"text/plain","size":49,"icons":[{"src":"https://e.com/i.png","mimeType":"image/png"}],"_meta":{"a":1}}`,
		string(r.ListEntry()))
	_, ok := r.Match("TEST://Static-Text")
	assert.True(t, ok, "a static URI matches case-insensitively")

	fn, b = resourceBinding(t, "tmpl", `{"name":"context","type":"mcpResourceTrigger","uri":"test://template/{id}/data",
		"resourceName":"t","size":10,"completions":"{\"id\":{\"values\":[\"1\",\"2\"]}}"}`)
	r, err = LoadResource(fn, b, "")
	require.NoError(t, err)
	require.NotNil(t, r.Template)
	assert.Equal(t, KindTemplate, r.Kind())
	assert.Equal(t, `{"name":"t","uriTemplate":"test://template/{id}/data"}`, string(r.ListEntry()), "a template is listed without size")
	src, ok := r.Completion("id")
	assert.True(t, ok)
	assert.Equal(t, []string{"1", "2"}, src.Values)
	vars, ok := r.Match("test://template/7/data")
	assert.True(t, ok)
	assert.Equal(t, map[string]string{"id": "7"}, vars)
}

func TestLoadResourceErrors(t *testing.T) {
	for _, tc := range []struct {
		name, binding string
		want          []string
	}{
		{"no uri", `{"type":"mcpResourceTrigger","resourceName":"r"}`, []string{"uri is missing"}},
		{"uri not a string", `{"type":"mcpResourceTrigger","uri":5,"resourceName":"r"}`, []string{"uri must be a string"}},
		{"blank uri", `{"type":"mcpResourceTrigger","uri":" ","resourceName":"r"}`, []string{"uri is empty"}},
		{"relative uri", `{"type":"mcpResourceTrigger","uri":"static-text","resourceName":"r"}`, []string{"not an absolute URI"}},
		{"bad template", `{"type":"mcpResourceTrigger","uri":"test://{a}{b}","resourceName":"r"}`, []string{`resource template "test://{a}{b}" (res/function.json): resource URI "test://{a}{b}": template expressions must be separated`}},
		{"no name", `{"type":"mcpResourceTrigger","uri":"test://x"}`, []string{"resourceName is missing"}},
		{"bad mime", `{"type":"mcpResourceTrigger","uri":"test://x","resourceName":"r","mimeType":"text"}`, []string{`"text" is not a MIME type`}},
		{"size string", `{"type":"mcpResourceTrigger","uri":"test://x","resourceName":"r","size":"10"}`, []string{"size must be a number"}},
		{"size negative", `{"type":"mcpResourceTrigger","uri":"test://x","resourceName":"r","size":-1}`, []string{"at least 0"}},
		{"size fraction", `{"type":"mcpResourceTrigger","uri":"test://x","resourceName":"r","size":1.5}`, []string{"whole number"}},
		{"metadata array", `{"type":"mcpResourceTrigger","uri":"test://x","resourceName":"r","metadata":"[1]"}`, []string{"metadata must be a JSON object"}},
		{"icons object", `{"type":"mcpResourceTrigger","uri":"test://x","resourceName":"r","icons":"{}"}`, []string{"icons must be a string holding a JSON array"}},
		{"icon without src", `{"type":"mcpResourceTrigger","uri":"test://x","resourceName":"r","icons":"[{\"mimeType\":\"image/png\"}]"}`, []string{"icons[0]: src is missing"}},
		{"icon javascript", `{"type":"mcpResourceTrigger","uri":"test://x","resourceName":"r","icons":"[{\"src\":\"javascript:alert(1)\"}]"}`, []string{"https:, http: or data:"}},
		{"icon theme", `{"type":"mcpResourceTrigger","uri":"test://x","resourceName":"r","icons":"[{\"src\":\"https://a/b\",\"theme\":\"blue\"}]"}`, []string{`theme "blue"`}},
		{"completions on static", `{"type":"mcpResourceTrigger","uri":"test://x","resourceName":"r","completions":"{}"}`, []string{"a static resource has no variables"}},
		{"completions unknown variable", `{"type":"mcpResourceTrigger","uri":"test://{id}","resourceName":"r","completions":"{\"name\":{\"dynamic\":true}}"}`, []string{`"name" is not a variable of the template`}},
		{"completions both", `{"type":"mcpResourceTrigger","uri":"test://{id}","resourceName":"r","completions":"{\"id\":{\"dynamic\":true,\"values\":[]}}"}`, []string{"both values and dynamic"}},
		{"completions neither", `{"type":"mcpResourceTrigger","uri":"test://{id}","resourceName":"r","completions":"{\"id\":{}}"}`, []string{`{"values":[strings]} or {"dynamic":true}`}},
		{"completions values not strings", `{"type":"mcpResourceTrigger","uri":"test://{id}","resourceName":"r","completions":"{\"id\":{\"values\":[1]}}"}`, []string{`{"values":[strings]}`}},
		{"wrong type", `{"type":"mcpToolTrigger","uri":"test://x","resourceName":"r"}`, []string{"not \"mcpResourceTrigger\""}},
		{"every problem", `{"type":"mcpResourceTrigger","uri":"x","mimeType":"y","size":-2}`, []string{"not an absolute URI", "resourceName is missing", "not a MIME type", "at least 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fn, b := resourceBinding(t, "res", tc.binding)
			r, err := LoadResource(fn, b, "res/function.json")
			require.Error(t, err)
			assert.Nil(t, r)
			var le *LoadError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, "res", le.Function)
			assert.Equal(t, "res/function.json", le.File)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Equal(t, len(tc.want), strings.Count(err.Error(), `function "res"`), "one line per problem: %v", err)
		})
	}
	_, err := LoadResource(nil, nil, "")
	assert.ErrorContains(t, err, "binding is null")
}

// TestResourceDecodeReturnValue models the extension's
// ResourceReturnValueBinder: the worker's envelope is read as one contents
// item, anything else the binder cannot read as an envelope becomes text.
func TestResourceDecodeReturnValue(t *testing.T) {
	r := &Resource{URI: "test://template/{id}/data", MimeType: "application/json"}
	const requested = "test://template/7/data"
	str := func(s string) string { data, _ := json.Marshal(s); return string(data) }
	for _, tc := range []struct {
		name, raw, want, err string
	}{
		{name: "absent", raw: ``, want: `{"contents":[]}`},
		{name: "null", raw: `null`, want: `{"contents":[]}`},
		{name: "text envelope", raw: str(`{"content":"{\"uri\":\"test://template/7/data\",\"mimeType\":\"text/plain\",\"text\":\"hi\"}"}`),
			want: `{"contents":[{"uri":"test://template/7/data","mimeType":"text/plain","text":"hi"}]}`},
		{name: "blob envelope", raw: str(`{"content":"{\"uri\":\"test://b\",\"mimeType\":\"image/png\",\"blob\":\"iVBORw0KGgo=\"}"}`),
			want: `{"contents":[{"uri":"test://b","mimeType":"image/png","blob":"iVBORw0KGgo="}]}`},
		{name: "envelope fills uri and mimeType", raw: str(`{"Content":"{\"text\":\"hi\",\"_meta\":{\"k\": 1}}"}`),
			want: `{"contents":[{"uri":"test://template/7/data","mimeType":"application/json","text":"hi","_meta":{"k":1}}]}`},
		{name: "envelope as an object", raw: `{"content":"{\"uri\":\"u:x\",\"text\":\"t\"}"}`,
			want: `{"contents":[{"uri":"u:x","mimeType":"application/json","text":"t"}]}`},
		{name: "plain text", raw: str(`hello`), want: `{"contents":[{"uri":"test://template/7/data","mimeType":"application/json","text":"hello"}]}`},
		{name: "JSON without content", raw: str(`{"id":"7"}`), want: `{"contents":[{"uri":"test://template/7/data","mimeType":"application/json","text":"{\"id\":\"7\"}"}]}`},
		{name: "content not a string", raw: str(`{"content":{"text":"x"}}`), want: `{"contents":[{"uri":"test://template/7/data","mimeType":"application/json","text":"{\"content\":{\"text\":\"x\"}}"}]}`},
		{name: "content not JSON", raw: str(`{"content":"just words"}`), want: `{"contents":[{"uri":"test://template/7/data","mimeType":"application/json","text":"{\"content\":\"just words\"}"}]}`},
		{name: "a number", raw: `42`, want: `{"contents":[{"uri":"test://template/7/data","mimeType":"application/json","text":"42"}]}`},
		{name: "content null", raw: str(`{"content":null}`), err: "content is null"},
		{name: "content JSON null", raw: str(`{"content":"null"}`), err: "JSON null"},
		{name: "neither text nor blob", raw: str(`{"content":"{\"uri\":\"u:x\"}"}`), err: `neither "text" nor "blob"`},
		{name: "text not a string", raw: str(`{"content":"{\"text\":5}"}`), err: "text must be a string"},
		{name: "blob not base64", raw: str(`{"content":"{\"blob\":\"***\"}"}`), err: "not base64"},
		{name: "meta not an object", raw: str(`{"content":"{\"text\":\"x\",\"_meta\":[1]}"}`), err: "_meta must be a JSON object"},
		{name: "broken JSON", raw: `{"content":`, err: "not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := r.DecodeReturnValue(json.RawMessage(tc.raw), requested)
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
