package binding

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// envelopeValue returns the ReturnValue a worker sends for a result envelope:
// the envelope JSON as a JSON string. structured "" leaves structuredContent
// null.
func envelopeValue(typ, content, structured string) string {
	env := metadata.ToolResult{Type: typ, Content: content}
	if structured != "" {
		env.StructuredContent = &structured
	}
	data, _ := json.Marshal(env)
	return quote(string(data))
}

const (
	textBlock  = `{"type":"text","text":"hello"}`
	imageBlock = `{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}`
	audioBlock = `{"type":"audio","data":"UklGRg==","mimeType":"audio/wav"}`
	resBlock   = `{"type":"resource","resource":{"uri":"urn:example","mimeType":"text/plain","text":"content"}}`
	blobBlock  = `{"type":"resource","resource":{"uri":"urn:blob","blob":"AAE="}}`
	linkBlock  = `{"type":"resource_link","uri":"https://example.com/r","name":"r","size":12}`
)

func TestDecodeReturnValue(t *testing.T) {
	tests := []struct {
		name      string
		raw       string
		useResult bool
		want      string // the CallToolResult JSON
		plain     string // Decoded.Plain, "" for nil
		err       string // substring of the *ResultError message
	}{
		// No value.
		{name: "absent", raw: ``, want: `{"content":[]}`},
		{name: "null", raw: `null`, want: `{"content":[]}`},
		{name: "null with envelope", raw: ` null `, useResult: true, want: `{"content":[]}`},

		// Plain values (SimpleToolReturnValueBinder).
		{name: "string", raw: `"Hello MCP"`, want: `{"content":[{"type":"text","text":"Hello MCP"}]}`},
		{name: "empty string", raw: `""`, want: `{"content":[{"type":"text","text":""}]}`},
		{name: "number", raw: `123`, want: `{"content":[{"type":"text","text":"123"}]}`, plain: `123`},
		{name: "object", raw: `{ "temp": 21.50, "city": "Oslo" }`, want: `{"content":[{"type":"text","text":"{\"temp\":21.50,\"city\":\"Oslo\"}"}]}`, plain: `{"temp":21.50,"city":"Oslo"}`},
		{name: "array", raw: `[1, 2]`, want: `{"content":[{"type":"text","text":"[1,2]"}]}`, plain: `[1,2]`},
		{name: "bool", raw: `true`, want: `{"content":[{"type":"text","text":"true"}]}`, plain: `true`},
		{name: "string holding JSON", raw: quote(`{"temp": 3}`), want: `{"content":[{"type":"text","text":"{\"temp\": 3}"}]}`, plain: `{"temp":3}`},
		{name: "envelope without useResultSchema is text", raw: envelopeValue("text", textBlock, ""),
			want:  `{"content":[{"type":"text","text":` + quote(`{"content":"{\"type\":\"text\",\"text\":\"hello\"}","type":"text","structuredContent":null}`) + `}]}`,
			plain: `{"content":"{\"type\":\"text\",\"text\":\"hello\"}","type":"text","structuredContent":null}`},
		{name: "HTML kept", raw: `"a < b & c"`, want: `{"content":[{"type":"text","text":"a < b & c"}]}`},
		{name: "not JSON", raw: `{`, err: "the return value is not valid JSON"},

		// Plain values with useResultSchema (not an envelope).
		{name: "string holding an object without type", raw: quote(`{"temp":1}`), useResult: true, want: `{"content":[{"type":"text","text":"{\"temp\":1}"}]}`, plain: `{"temp":1}`},
		{name: "object with type but no content", raw: quote(`{"type":"sunny","temp":3}`), useResult: true, want: `{"content":[{"type":"text","text":"{\"type\":\"sunny\",\"temp\":3}"}]}`, plain: `{"type":"sunny","temp":3}`},
		{name: "string holding a number", raw: `"42"`, useResult: true, want: `{"content":[{"type":"text","text":"42"}]}`, plain: `42`},
		{name: "number value", raw: `123`, useResult: true, want: `{"content":[{"type":"text","text":"123"}]}`, plain: `123`},
		{name: "whole value not JSON", raw: `"not-json"`, useResult: true, err: "the return value is not a JSON result envelope: invalid character 'o' in literal null"},
		{name: "whole value empty", raw: `"  "`, useResult: true, err: "the return value is not a JSON result envelope: it is empty"},

		// Single blocks.
		{name: "text", raw: envelopeValue("text", textBlock, ""), useResult: true, want: `{"content":[` + textBlock + `]}`},
		{name: "image", raw: envelopeValue("image", imageBlock, ""), useResult: true, want: `{"content":[` + imageBlock + `]}`},
		{name: "audio", raw: envelopeValue("audio", audioBlock, ""), useResult: true, want: `{"content":[` + audioBlock + `]}`},
		{name: "resource", raw: envelopeValue("resource", resBlock, ""), useResult: true, want: `{"content":[` + resBlock + `]}`},
		{name: "resource blob", raw: envelopeValue("resource", blobBlock, ""), useResult: true, want: `{"content":[` + blobBlock + `]}`},
		{name: "resource_link", raw: envelopeValue("resource_link", linkBlock, ""), useResult: true, want: `{"content":[` + linkBlock + `]}`},
		{name: "block compacted", raw: envelopeValue("text", "{ \"type\" : \"text\",\n \"text\" : \"hi\" }", ""), useResult: true, want: `{"content":[{"type":"text","text":"hi"}]}`},
		{name: "unknown envelope type with a valid block", raw: envelopeValue("random_type", imageBlock, ""), useResult: true, want: `{"content":[` + imageBlock + `]}`},
		{name: "envelope type differs from block type", raw: envelopeValue("text", imageBlock, ""), useResult: true, want: `{"content":[` + imageBlock + `]}`},
		{name: "text with structuredContent", raw: envelopeValue("text", `{"type":"text","text":"{\"total\":2}"}`, `{"total": 2}`), useResult: true,
			want: `{"content":[{"type":"text","text":"{\"total\":2}"}],"structuredContent":{"total":2}}`},
		{name: "structuredContent array", raw: envelopeValue("text", textBlock, `[1,2]`), useResult: true, want: `{"content":[` + textBlock + `],"structuredContent":[1,2]}`},
		{name: "structuredContent scalar", raw: envelopeValue("text", textBlock, `42`), useResult: true, want: `{"content":[` + textBlock + `],"structuredContent":42}`},
		{name: "structuredContent empty string", raw: envelopeValue("text", textBlock, ` `), useResult: true, want: `{"content":[` + textBlock + `]}`},
		{name: "structuredContent null text", raw: envelopeValue("text", textBlock, `null`), useResult: true, err: "structuredContent is null"},
		{name: "structuredContent malformed", raw: envelopeValue("text", textBlock, `{"a":`), useResult: true, err: "structuredContent is not valid JSON"},

		// Multiple blocks.
		{name: "multi", raw: envelopeValue("multi_content_result", `[`+textBlock+`,`+imageBlock+`,`+linkBlock+`]`, ""), useResult: true,
			want: `{"content":[` + textBlock + `,` + imageBlock + `,` + linkBlock + `]}`},
		{name: "multi two images", raw: envelopeValue("multi_content_result", `[`+imageBlock+`,`+imageBlock+`]`, ""), useResult: true,
			want: `{"content":[` + imageBlock + `,` + imageBlock + `]}`},
		{name: "multi with structuredContent", raw: envelopeValue("multi_content_result", `[`+textBlock+`]`, `{"a":1}`), useResult: true,
			want: `{"content":[` + textBlock + `],"structuredContent":{"a":1}}`},
		{name: "multi empty", raw: envelopeValue("multi_content_result", `[]`, ""), useResult: true, err: "no content items were produced"},
		{name: "multi not an array", raw: envelopeValue("multi_content_result", textBlock, ""), useResult: true, err: `the content of type "multi_content_result" must be a JSON array of content blocks`},
		{name: "multi unknown block", raw: envelopeValue("multi_content_result", `[`+textBlock+`,{"type":"unknown_type"}]`, ""), useResult: true,
			err: `content block 1 of type "multi_content_result": unknown content block type "unknown_type"`},

		// Whole CallToolResult.
		{name: "call_tool_result", raw: envelopeValue("call_tool_result", `{"content":[`+textBlock+`,`+imageBlock+`]}`, ""), useResult: true,
			want: `{"content":[` + textBlock + `,` + imageBlock + `]}`},
		{name: "call_tool_result structured wins", raw: envelopeValue("call_tool_result", `{"content":[`+textBlock+`],"structuredContent":{"inner":true}}`, `{"outer":true}`), useResult: true,
			want: `{"content":[` + textBlock + `],"structuredContent":{"inner":true}}`},
		{name: "call_tool_result envelope structured ignored", raw: envelopeValue("call_tool_result", `{"content":[`+textBlock+`]}`, `{"outer":true}`), useResult: true,
			want: `{"content":[` + textBlock + `]}`},
		{name: "call_tool_result isError and meta", raw: envelopeValue("call_tool_result", `{"content":[{"type":"text","text":"bad city"}],"isError":true,"_meta":{"k":1}}`, ""), useResult: true,
			want: `{"content":[{"type":"text","text":"bad city"}],"isError":true,"_meta":{"k":1}}`},
		{name: "call_tool_result empty", raw: envelopeValue("call_tool_result", `{}`, ""), useResult: true, want: `{"content":[]}`},
		{name: "call_tool_result null structured", raw: envelopeValue("call_tool_result", `{"content":[],"structuredContent":null}`, ""), useResult: true, want: `{"content":[]}`},
		{name: "call_tool_result case-insensitive", raw: envelopeValue("CALL_TOOL_RESULT", `{"Content":[`+textBlock+`],"IsError":true}`, ""), useResult: true,
			want: `{"content":[` + textBlock + `],"isError":true}`},
		{name: "call_tool_result array", raw: envelopeValue("call_tool_result", `[]`, ""), useResult: true, err: `the content of type "call_tool_result" must be a JSON object`},
		{name: "call_tool_result bad block", raw: envelopeValue("call_tool_result", `{"content":[{"type":"text"}]}`, ""), useResult: true,
			err: `content block 0 of type "call_tool_result": the "text" block needs a string "text"`},
		{name: "call_tool_result bad content", raw: envelopeValue("call_tool_result", `{"content":"x"}`, ""), useResult: true, err: `is not a CallToolResult`},

		// Envelope forms.
		{name: "envelope as an object", raw: `{"type":"text","content":` + quote(textBlock) + `}`, useResult: true, want: `{"content":[` + textBlock + `]}`},
		{name: "content as an object", raw: quote(`{"type":"text","content":` + textBlock + `,"structuredContent":{"a":1}}`), useResult: true,
			want: `{"content":[` + textBlock + `],"structuredContent":{"a":1}}`},
		{name: "keys in any case", raw: quote(`{"Type":"text","CONTENT":` + quote(textBlock) + `,"StructuredContent":"{\"a\":1}"}`), useResult: true,
			want: `{"content":[` + textBlock + `],"structuredContent":{"a":1}}`},

		// Broken envelopes.
		{name: "random type, content not JSON", raw: envelopeValue("random_type", "ignored", ""), useResult: true, err: `the content of type "random_type" is not valid JSON`},
		{name: "content invalid JSON", raw: envelopeValue("text", "{invalid-json}", ""), useResult: true, err: `the content of type "text" is not valid JSON`},
		{name: "content null text", raw: envelopeValue("text", "null", ""), useResult: true, err: `the content of type "text" is null`},
		{name: "content empty", raw: envelopeValue("text", "", ""), useResult: true, err: `the content of type "text" is empty`},
		{name: "content JSON null", raw: quote(`{"type":"text","content":null}`), useResult: true, err: `the envelope of type "text" has no content`},
		{name: "content missing", raw: quote(`{"type":"text","structuredContent":"{}"}`), useResult: true, err: `the envelope of type "text" has no content`},
		{name: "content a number", raw: quote(`{"type":"text","content":5}`), useResult: true, err: `the content of type "text" must be a string holding JSON, not 5`},
		{name: "block a string", raw: envelopeValue("text", `"hello"`, ""), useResult: true, err: `a content block must be a JSON object, not "hello"`},
		{name: "block without type", raw: envelopeValue("text", `{"text":"hello"}`, ""), useResult: true, err: `a content block needs a string "type"`},
		{name: "unknown block type", raw: envelopeValue("text", `{"type":"video","data":"x"}`, ""), useResult: true, err: `unknown content block type "video"`},
		{name: "text block text not a string", raw: envelopeValue("text", `{"type":"text","text":5}`, ""), useResult: true, err: `"text" block needs a string "text"`},
		{name: "image without mimeType", raw: envelopeValue("image", `{"type":"image","data":"AA=="}`, ""), useResult: true, err: `"image" block needs a string "mimeType"`},
		{name: "audio without data", raw: envelopeValue("audio", `{"type":"audio","mimeType":"audio/wav"}`, ""), useResult: true, err: `needs a string "data"`},
		{name: "resource without resource", raw: envelopeValue("resource", `{"type":"resource"}`, ""), useResult: true, err: `"resource" block needs a "resource" object`},
		{name: "resource without uri", raw: envelopeValue("resource", `{"type":"resource","resource":{"text":"x"}}`, ""), useResult: true, err: `"resource" block's "resource" needs a string "uri"`},
		{name: "resource without text or blob", raw: envelopeValue("resource", `{"type":"resource","resource":{"uri":"u"}}`, ""), useResult: true, err: `needs "text" or "blob"`},
		{name: "resource_link without name", raw: envelopeValue("resource_link", `{"type":"resource_link","uri":"u"}`, ""), useResult: true, err: `"resource_link" block needs a string "name"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := DecodeReturnValue(json.RawMessage(tt.raw), tt.useResult)
			if tt.err != "" {
				assert.Nil(t, d)
				var re *ResultError
				require.ErrorAs(t, err, &re)
				assert.Contains(t, re.Reason, tt.err)
				assert.Equal(t, "decoding the tool result: "+re.Reason, err.Error())
				return
			}
			require.NoError(t, err)
			require.NotNil(t, d.Result)
			got, err := json.Marshal(d.Result)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(got))
			assert.NotNil(t, d.Result.Content, "content is [] rather than null")
			if tt.plain == "" {
				assert.Nil(t, d.Plain)
			} else {
				assert.Equal(t, tt.plain, string(d.Plain))
			}
		})
	}
}

// The weather tool of the ShapeResult tests and benchmarks.
const forecastSchema = `{"type":"object","properties":{
	"city":{"type":"string","minLength":1},
	"unit":{"enum":["celsius","fahrenheit"]},
	"current":{"$ref":"#/$defs/reading"},
	"days":{"type":"array","items":{"type":"object","properties":{
		"date":{"type":"string"},"high":{"type":"number"},"low":{"type":"number"},
		"summary":{"type":"string"},"rainChance":{"type":"number","minimum":0,"maximum":1}},
		"required":["date","high","low"]}}},
	"required":["city","current","days"],
	"additionalProperties":false,
	"$defs":{"reading":{"type":"object","properties":{"temp":{"type":"number"},"wind":{"type":"number"},"conditions":{"type":"string"}},"required":["temp"]}}}`

func forecastTool(t testing.TB) *Tool {
	t.Helper()
	out, err := ParseSchema(OutputSchema, forecastSchema)
	require.NoError(t, err)
	in, err := ParseSchema(InputSchema, `{"type":"object"}`)
	require.NoError(t, err)
	return &Tool{Trigger: &Trigger{ToolName: "get_forecast"}, Input: in, Output: out}
}

const validForecast = `{"city":"Seattle","unit":"celsius","current":{"temp":11.5,"wind":14,"conditions":"Light rain"},"days":[` +
	`{"date":"2026-03-01","high":12.5,"low":6,"summary":"Showers in the morning, clearing later","rainChance":0.7},` +
	`{"date":"2026-03-02","high":14,"low":7.5,"summary":"Partly cloudy with a light breeze","rainChance":0.2},` +
	`{"date":"2026-03-03","high":15.5,"low":8,"summary":"Sunny intervals, dry and mild","rainChance":0.05}]}`

func TestShapeResult(t *testing.T) {
	mirror := metadata.TextContent(validForecast)
	const (
		strict = metadata.ValidationStrict
		warn   = metadata.ValidationWarn
		off    = metadata.ValidationOff
	)
	badForecast := `{"city":"","current":{"temp":"cold"},"days":[{"date":"d","high":1}],"extra":1}`
	badProblems := []Problem{
		{InstanceLocation: "", KeywordLocation: "/additionalProperties", Message: "additional properties 'extra' not allowed"},
		{InstanceLocation: "/city", KeywordLocation: "/properties/city/minLength", Message: "minLength: got 0, want 1"},
		{InstanceLocation: "/current/temp", KeywordLocation: "/$defs/reading/properties/temp/type", Message: "got string, want number"},
		{InstanceLocation: "/days/0", KeywordLocation: "/properties/days/items/required", Message: "missing property 'low'"},
	}
	tests := []struct {
		name     string
		decoded  *Decoded
		noOutput bool
		mode     metadata.OutputValidation
		copy     metadata.TextCopy
		want     string    // the result afterwards
		problems []Problem // an issue with a *ValidationError with these problems
		errText  string    // or an issue whose message contains this
		same     bool      // the result must be unchanged
	}{
		{name: "valid, json copy added beside a summary", mode: strict,
			decoded: &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("summary")}, StructuredContent: json.RawMessage(validForecast)}},
			want:    `{"content":[{"type":"text","text":"summary"},` + string(mirror) + `],"structuredContent":` + validForecast + `}`},
		{name: "valid, summary copy keeps the handler's text", mode: strict, copy: metadata.TextCopySummary,
			decoded: &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("summary")}, StructuredContent: json.RawMessage(validForecast)}},
			want:    `{"content":[{"type":"text","text":"summary"}],"structuredContent":` + validForecast + `}`},
		{name: "valid, summary copy without text falls back to json", mode: strict, copy: metadata.TextCopySummary,
			decoded: &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{json.RawMessage(imageBlock)}, StructuredContent: json.RawMessage(validForecast)}},
			want:    `{"content":[` + imageBlock + `,` + string(mirror) + `],"structuredContent":` + validForecast + `}`},
		{name: "valid, no copy", mode: strict, copy: metadata.TextCopyNone,
			decoded: &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{}, StructuredContent: json.RawMessage(validForecast)}},
			want:    `{"content":[],"structuredContent":` + validForecast + `}`},
		{name: "valid, text mirror added", mode: strict,
			decoded: &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{json.RawMessage(imageBlock)}, StructuredContent: json.RawMessage(validForecast)}},
			want:    `{"content":[` + imageBlock + `,` + string(mirror) + `],"structuredContent":` + validForecast + `}`},
		{name: "valid, mirror not added twice", mode: strict,
			decoded: &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{mirror}, StructuredContent: json.RawMessage(validForecast)}},
			want:    `{"content":[` + string(mirror) + `],"structuredContent":` + validForecast + `}`},
		{name: "valid, no content at all", mode: strict,
			decoded: &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{}, StructuredContent: json.RawMessage(validForecast)}},
			want:    `{"content":[` + string(mirror) + `],"structuredContent":` + validForecast + `}`},
		{name: "invalid under warn: problems and result delivered", mode: warn,
			decoded:  &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{}, StructuredContent: json.RawMessage(badForecast)}},
			want:     `{"content":[` + string(metadata.TextContent(badForecast)) + `],"structuredContent":` + badForecast + `}`,
			problems: badProblems},
		{name: "invalid under strict: an isError result naming the tool and the pointers", mode: strict,
			decoded: &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{}, StructuredContent: json.RawMessage(badForecast)}},
			want: `{"isError":true,"content":[{"type":"text","text":"Output of tool 'get_forecast' does not match its output schema: ` +
				`at '' (/additionalProperties): additional properties 'extra' not allowed; at '/city' (/properties/city/minLength): minLength: got 0, want 1; ` +
				`at '/current/temp' (/$defs/reading/properties/temp/type): got string, want number; at '/days/0' (/properties/days/items/required): missing property 'low'"}]}`,
			problems: badProblems},
		{name: "invalid root type", mode: warn,
			decoded:  &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{}, StructuredContent: json.RawMessage(`[1]`)}},
			want:     `{"content":[{"type":"text","text":"[1]"}],"structuredContent":[1]}`,
			problems: []Problem{{InstanceLocation: "", KeywordLocation: "/type", Message: "got array, want object"}}},
		{name: "structuredContent not JSON", mode: strict,
			decoded: &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{}, StructuredContent: json.RawMessage(`{"a":`)}},
			want:    `{"isError":true,"content":[{"type":"text","text":"Output of tool 'get_forecast' does not match its output schema: structuredContent is not valid JSON: unexpected EOF"}]}`,
			errText: "structuredContent is not valid JSON"},
		{name: "plain JSON promoted", mode: strict,
			decoded: &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{mirror}}, Plain: json.RawMessage(validForecast)},
			want:    `{"content":[` + string(mirror) + `],"structuredContent":` + validForecast + `}`},
		{name: "plain JSON not matching is not promoted", mode: warn, same: true,
			decoded: &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent(`{"city":1}`)}}, Plain: json.RawMessage(`{"city":1}`)},
			problems: []Problem{
				{InstanceLocation: "", KeywordLocation: "/required", Message: "missing properties 'current', 'days'"},
				{InstanceLocation: "/city", KeywordLocation: "/properties/city/type", Message: "got number, want string"},
			}},
		{name: "plain scalar not promoted", mode: warn, same: true,
			decoded:  &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("42")}}, Plain: json.RawMessage(`42`)},
			problems: []Problem{{Message: ProblemNoStructuredContent}}},
		{name: "no structured content, no plain", mode: warn, same: true,
			decoded:  &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent("hi")}}},
			problems: []Problem{{Message: ProblemNoStructuredContent}}},
		{name: "null structured content is none", mode: warn,
			decoded:  &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{}, StructuredContent: json.RawMessage(`null`)}},
			want:     `{"content":[]}`,
			problems: []Problem{{Message: ProblemNoStructuredContent}}},
		{name: "isError untouched", mode: strict, same: true,
			decoded: &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{}, StructuredContent: json.RawMessage(`{"bad":true}`), IsError: true}}},
		{name: "isError plain not promoted", mode: strict, same: true,
			decoded: &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{mirror}, IsError: true}, Plain: json.RawMessage(validForecast)}},
		{name: "tool without output schema: only the copy", noOutput: true, mode: strict,
			decoded: &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{}, StructuredContent: json.RawMessage(`{"anything":1}`)}},
			want:    `{"content":[{"type":"text","text":"{\"anything\":1}"}],"structuredContent":{"anything":1}}`},
		{name: "off skips validation but adds the mirror", mode: off,
			decoded: &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{}, StructuredContent: json.RawMessage(`{"bad":true}`)}},
			want:    `{"content":[{"type":"text","text":"{\"bad\":true}"}],"structuredContent":{"bad":true}}`},
		{name: "off does not promote", mode: off, same: true,
			decoded: &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{mirror}}, Plain: json.RawMessage(validForecast)}},
		{name: "nil decoded", mode: strict, decoded: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool := forecastTool(t)
			if tt.noOutput {
				tool.Output = nil
			}
			var before string
			if tt.decoded != nil {
				before = snapshot(tt.decoded.Result)
			}
			var err error
			if issue := tool.ShapeResult(tt.decoded, metadata.OutputSettings{Validation: tt.mode, TextCopy: tt.copy}); issue != nil {
				err = issue
				assert.Equal(t, tt.mode, issue.Mode)
				assert.Equal(t, "get_forecast", issue.Tool)
			}
			switch {
			case tt.problems != nil:
				var ve *ValidationError
				require.ErrorAs(t, err, &ve)
				assert.Equal(t, OutputSchema, ve.Kind)
				assert.Equal(t, tt.problems, ve.Problems)
			case tt.errText != "":
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.errText)
			default:
				require.NoError(t, err)
			}
			if tt.decoded == nil {
				return
			}
			if tt.same {
				assert.Equal(t, before, snapshot(tt.decoded.Result))
				return
			}
			after, err := json.Marshal(tt.decoded.Result)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(after))
		})
	}
}

// TestShapeResultTrustsOnlyAMatchingCheck shows when the host skips its own
// validation: only for a check that is the digest of this schema and these
// very bytes.
func TestShapeResultTrustsOnlyAMatchingCheck(t *testing.T) {
	tool := forecastTool(t)
	bad := json.RawMessage(`{"city":1}`)
	strict := metadata.OutputSettings{Validation: metadata.ValidationStrict}
	other, err := ParseSchema(OutputSchema, `{"type":"object"}`)
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		checked string
		skipped bool
	}{
		{"no check", "", false},
		{"a check of other bytes", tool.Output.Digest([]byte(`{"city":2}`)), false},
		{"a check against another schema", other.Digest(bad), false},
		{"garbage", "yes, validated", false},
		{"the digest of this schema and these bytes", tool.Output.Digest(bad), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{}, StructuredContent: bad}, Checked: tc.checked}
			issue := tool.ShapeResult(d, strict)
			assert.Equal(t, tc.skipped, issue == nil, "issue: %v", issue)
			assert.Equal(t, !tc.skipped, d.Result.IsError)
		})
	}
	// A validated result carries the digest a host can check.
	d := &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{}, StructuredContent: json.RawMessage(validForecast)}}
	require.Nil(t, tool.ShapeResult(d, strict))
	assert.Equal(t, tool.Output.Digest([]byte(validForecast)), d.Checked)
	assert.Len(t, d.Checked, 64)
}

// snapshot renders a result without re-encoding it (its raw parts may be invalid).
func snapshot(r *metadata.CallToolResult) string {
	return fmt.Sprintf("%q %q %v %q", r.Content, r.StructuredContent, r.IsError, r.Meta)
}

// TestDecodeAndShape runs the host's path: a worker's envelope decoded, then
// shaped.
func TestDecodeAndShape(t *testing.T) {
	tool := forecastTool(t)
	raw := envelopeValue("text", string(metadata.TextContent(validForecast)), validForecast)
	d, err := DecodeReturnValue(json.RawMessage(raw), true)
	require.NoError(t, err)
	require.Nil(t, tool.ShapeResult(d, metadata.OutputSettings{}))
	assert.Len(t, d.Result.Content, 1, "the worker's text block is the mirror")
	assert.JSONEq(t, validForecast, string(d.Result.StructuredContent))

	// A plain JSON return value (no envelope) is promoted.
	d, err = DecodeReturnValue(json.RawMessage(quote(validForecast)), false)
	require.NoError(t, err)
	require.Nil(t, tool.ShapeResult(d, metadata.OutputSettings{}))
	assert.JSONEq(t, validForecast, string(d.Result.StructuredContent))
	assert.Len(t, d.Result.Content, 1)
}

// BenchmarkShapeResult_NoCall measures shaping and validating one decoded
// result, without the call around it.
func BenchmarkShapeResult_NoCall(b *testing.B) {
	tool := forecastTool(b)
	block := metadata.TextContent("Seattle: 11.5 °C, light rain")
	b.Logf("structuredContent: %d bytes", len(validForecast))
	strict := metadata.OutputSettings{}
	run := func(name string, set metadata.OutputSettings, content []json.RawMessage, checked string) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(validForecast)))
			for b.Loop() {
				d := &Decoded{Result: &metadata.CallToolResult{Content: slices.Clone(content), StructuredContent: json.RawMessage(validForecast)}, Checked: checked}
				if issue := tool.ShapeResult(d, set); issue != nil {
					b.Fatal(issue)
				}
			}
		})
	}
	mirror := metadata.TextContent(validForecast)
	run("validate", strict, []json.RawMessage{block, mirror}, "")
	run("validate+mirror", strict, []json.RawMessage{}, "")
	run("checked-by-worker", strict, []json.RawMessage{block, mirror}, tool.Output.Digest([]byte(validForecast)))
	run("novalidate", metadata.OutputSettings{Validation: metadata.ValidationOff}, []json.RawMessage{block, mirror}, "")
	raw := json.RawMessage(envelopeValue("text", string(metadata.TextContent(validForecast)), validForecast))
	b.Run("decode+validate", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			d, err := DecodeReturnValue(raw, true)
			if err != nil {
				b.Fatal(err)
			}
			if issue := tool.ShapeResult(d, strict); issue != nil {
				b.Fatal(issue)
			}
		}
	})
}

// TestDecodeReturnValueReadsTheOutputIssue: the output issue a funcmcp
// worker names in its envelope reaches funchost with the result.
func TestDecodeReturnValueReadsTheOutputIssue(t *testing.T) {
	const issue = "Output of tool 'x' does not match its output schema: at '/n' (/properties/n/type): got string, want integer"
	inner, err := json.Marshal(metadata.ToolResult{Type: metadata.ResultTypeCallToolResult,
		Content: string(metadata.ErrorResult(issue).AppendJSON(nil)), OutputIssue: issue})
	require.NoError(t, err)
	d, err := DecodeReturnValue(json.RawMessage(quote(string(inner))), true)
	require.NoError(t, err)
	assert.Equal(t, issue, d.Issue)
	assert.True(t, d.Result.IsError)

	d, err = DecodeReturnValue(json.RawMessage(quote(`{"type":"text","content":"{\"type\":\"text\",\"text\":\"x\"}","structuredContent":null}`)), true)
	require.NoError(t, err)
	assert.Empty(t, d.Issue)
}
