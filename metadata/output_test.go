package metadata

import (
	"encoding/json"
	"errors"
	"maps"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLookupFold(t *testing.T) {
	m := map[string]int{"Name": 1, "name": 2, "OTHER": 3}
	for _, tc := range []struct {
		key  string
		want int
		ok   bool
	}{
		{"name", 2, true},  // exact wins
		{"Name", 1, true},  // exact wins
		{"other", 3, true}, // folded
		{"missing", 0, false},
	} {
		got, ok := LookupFoldMap(m, tc.key)
		assert.Equal(t, tc.ok, ok, tc.key)
		assert.Equal(t, tc.want, got, tc.key)
	}
	// Over an ordered sequence, the exact key wins even after a folded one,
	// and the first folded key wins among several.
	fields := []Field{{"TYPE", json.RawMessage(`1`)}, {"Type", json.RawMessage(`2`)}, {"type", json.RawMessage(`3`)}}
	v, ok := LookupFold(FieldSeq(fields), "type")
	require.True(t, ok)
	assert.Equal(t, "3", string(v))
	v, _ = LookupFold(FieldSeq(fields[:2]), "type")
	assert.Equal(t, "1", string(v))
	_, ok = LookupFold(maps.All(map[string]int{}), "x")
	assert.False(t, ok)

	// Over a map without the exact key, the smallest folded key wins every
	// time, whatever order the map is walked in.
	folded := map[string]int{"TYPE": 1, "TyPe": 2, "Type": 3, "tYPE": 4, "tyPE": 5, "typE": 6}
	for range 200 {
		got, ok := LookupFoldMap(folded, "type")
		require.True(t, ok)
		require.Equal(t, 1, got, "TYPE is the smallest key")
	}
}

func TestSetField(t *testing.T) {
	fields := SetField(nil, "a", json.RawMessage(`1`))
	fields = SetField(fields, "b", json.RawMessage(`2`))
	fields = SetField(fields, "a", json.RawMessage(`3`)) // replaced in place
	fields = SetField(fields, "A", json.RawMessage(`4`)) // keys match exactly
	assert.Equal(t, []Field{{"a", json.RawMessage(`3`)}, {"b", json.RawMessage(`2`)}, {"A", json.RawMessage(`4`)}}, fields)
}

func TestUnescapeHTML(t *testing.T) {
	for in, want := range map[string]string{
		`{"d":"a \u003c b \u0026 c \u003e d"}`: `{"d":"a < b & c > d"}`,
		`{"d":"\\u003c stays"}`:                `{"d":"\\u003c stays"}`, // an escaped backslash, then text
		`{"d":"\\\u003c"}`:                     `{"d":"\\<"}`,
		`{"d":"\u2028 \u00e9 \n"}`:             `{"d":"\u2028 \u00e9 \n"}`,
		`{"d":"plain"}`:                        `{"d":"plain"}`,
		`"\u003`:                               `"\u003`,
	} {
		got := string(UnescapeHTML([]byte(in)))
		assert.Equal(t, want, got, in)
		var a, b any
		if json.Unmarshal([]byte(in), &a) == nil {
			require.NoError(t, json.Unmarshal([]byte(got), &b), got)
			assert.Equal(t, a, b, "the same JSON value: %s", in)
		}
	}
}

func TestContentTypeFastPathAgrees(t *testing.T) {
	for _, block := range []string{
		`{"type":"text","text":"x"}`, `{"type":"image","data":"AA==","mimeType":"image/png"}`,
		`{"text":"x","annotations":{"type":"nested"},"type":"text"}`, `{"type":"te\"xt"}`, `{"type":"a\\b"}`,
		`{"text":"no type"}`, `{"type":5}`, `{"type":null}`, `[]`, `"text"`, ``, `{"type":`, `{}`,
	} {
		var h struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal([]byte(block), &h)
		assert.Equal(t, h.Type, ContentType(json.RawMessage(block)), block)
	}
}

func TestAddTextCopy(t *testing.T) {
	sc := json.RawMessage(`{"n":1}`)
	jsonCopy := TextContent(`{"n":1}`)
	summary := TextContent("one thing")
	image := json.RawMessage(`{"type":"image","data":"AA==","mimeType":"image/png"}`)
	spelledOtherwise := json.RawMessage(`{"text":"{\"n\":1}","type":"text"}`)
	for _, tc := range []struct {
		name    string
		mode    TextCopy
		res     CallToolResult
		content []json.RawMessage
	}{
		{"default adds the copy", "", CallToolResult{Content: []json.RawMessage{summary}, StructuredContent: sc}, []json.RawMessage{summary, jsonCopy}},
		{"json adds the copy", TextCopyJSON, CallToolResult{Content: []json.RawMessage{image}, StructuredContent: sc}, []json.RawMessage{image, jsonCopy}},
		{"json keeps an existing copy", TextCopyJSON, CallToolResult{Content: []json.RawMessage{jsonCopy}, StructuredContent: sc}, []json.RawMessage{jsonCopy}},
		{"json knows a copy spelled otherwise", TextCopyJSON, CallToolResult{Content: []json.RawMessage{spelledOtherwise}, StructuredContent: sc}, []json.RawMessage{spelledOtherwise}},
		{"none adds nothing", TextCopyNone, CallToolResult{Content: []json.RawMessage{}, StructuredContent: sc}, []json.RawMessage{}},
		{"summary keeps the handler's text", TextCopySummary, CallToolResult{Content: []json.RawMessage{summary}, StructuredContent: sc}, []json.RawMessage{summary}},
		{"summary without text adds the copy", TextCopySummary, CallToolResult{Content: []json.RawMessage{image}, StructuredContent: sc}, []json.RawMessage{image, jsonCopy}},
		{"no structured content", TextCopyJSON, CallToolResult{Content: []json.RawMessage{image}}, []json.RawMessage{image}},
		{"isError", TextCopyJSON, CallToolResult{Content: []json.RawMessage{summary}, StructuredContent: sc, IsError: true}, []json.RawMessage{summary}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := tc.res
			AddTextCopy(&res, tc.mode)
			assert.Equal(t, tc.content, res.Content)
			AddTextCopy(&res, tc.mode) // applying it again (worker, then host) changes nothing
			assert.Equal(t, tc.content, res.Content)
		})
	}
	AddTextCopy(nil, TextCopyJSON) // no panic
	assert.True(t, IsTextCopy(spelledOtherwise, sc))
	assert.False(t, IsTextCopy(summary, sc))
	assert.False(t, IsTextCopy(image, sc))
}

func TestParseOutputSettings(t *testing.T) {
	for _, tc := range []struct {
		hostJSON string
		want     OutputSettings
		errs     []string
	}{
		{`{"version":"2.0"}`, OutputSettings{}, nil},
		{`{"extensions":{"mcp":{"outputValidation":"warn","textCopy":"summary"}}}`, OutputSettings{Validation: ValidationWarn, TextCopy: TextCopySummary}, nil},
		{`{"Extensions":{"MCP":{"OutputValidation":" OFF ","TEXTCOPY":"None"}}}`, OutputSettings{Validation: ValidationOff, TextCopy: TextCopyNone}, nil},
		{`{"extensions":{"mcp":{"outputValidation":null}}}`, OutputSettings{}, nil},
		{`{"extensions":{"mcp":{"inputValidation":"warn"}}}`, OutputSettings{InputValidation: ValidationWarn}, nil},
		{`{"extensions":{"mcp":{"InputValidation":"loose"}}}`, OutputSettings{}, []string{`extensions.mcp.inputValidation: "loose" is not one of strict, warn, off`}},
		{`{"extensions":"not an object"}`, OutputSettings{}, nil},
		{`{"extensions":{"mcp":{"outputValidation":"sometimes","textCopy":2}}}`, OutputSettings{}, []string{
			`extensions.mcp.outputValidation: "sometimes" is not one of strict, warn, off`,
			`extensions.mcp.textCopy: must be a string`,
		}},
	} {
		t.Run(tc.hostJSON, func(t *testing.T) {
			got, err := ParseOutputSettings([]byte(tc.hostJSON))
			if tc.errs == nil {
				require.NoError(t, err)
				assert.Equal(t, tc.want, got)
				return
			}
			require.Error(t, err)
			var se *SettingError
			assert.True(t, errors.As(err, &se))
			for _, e := range tc.errs {
				assert.Contains(t, err.Error(), e)
			}
		})
	}
	_, err := ParseOutputSettings([]byte(`{`))
	assert.ErrorContains(t, err, "parsing host.json")
}

func TestErrorResult(t *testing.T) {
	data, err := Marshal(ErrorResult(`tool "t" failed: <no>`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"content":[{"type":"text","text":"tool \"t\" failed: <no>"}],"isError":true}`, string(data))
}
