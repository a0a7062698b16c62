package binding

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

const testFile = "app/get_weather/function.json"

// parseBinding decodes one binding object.
func parseBinding(t testing.TB, text string) *metadata.Binding {
	t.Helper()
	b := &metadata.Binding{}
	require.NoError(t, json.Unmarshal([]byte(text), b))
	return b
}

// trigger returns a valid trigger binding with extra keys appended (raw JSON
// members, e.g. `"title":"x"`).
func triggerJSON(extra string) string {
	s := `{"type":"mcpToolTrigger","direction":"in","name":"context","toolName":"get_weather","description":"Weather."`
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}

func testFunction(bindings ...*metadata.Binding) *metadata.Function {
	return &metadata.Function{Name: "get_weather", Bindings: bindings}
}

// quote returns s as a JSON string (for schema text inside a binding).
func quote(s string) string {
	data, _ := json.Marshal(s)
	return string(data)
}

func TestParseTrigger(t *testing.T) {
	tests := []struct {
		name    string
		binding string
		check   func(t *testing.T, tr *Trigger)
		errs    []string // each a substring of the message of one joined *ToolError
	}{
		{
			name:    "minimal",
			binding: triggerJSON(""),
			check: func(t *testing.T, tr *Trigger) {
				assert.Equal(t, &Trigger{Function: "get_weather", File: testFile, Name: "context",
					ToolName: "get_weather", Description: "Weather."}, tr)
			},
		},
		{
			name: "every key",
			binding: triggerJSON(`"title":"Get weather","toolProperties":` +
				quote(`[{"propertyName":"city","propertyType":"string","description":"City.","isRequired":true,"isArray":false,"enumValues":["Oslo","Lima"]}]`) +
				`,"metadata":` + quote(`{"ui":{"prefersBorder":true}, "v": 1.0}`) +
				`,"inputSchema":` + quote(`{"type":"object"}`) +
				`,"outputSchema":` + quote(`{"type":"object","properties":{"t":{"type":"number"}}}`) +
				`,"useWorkerInputSchema":true,"useResultSchema":true`),
			check: func(t *testing.T, tr *Trigger) {
				assert.Equal(t, "Get weather", tr.Title)
				assert.Equal(t, []metadata.ToolProperty{{PropertyName: "city", PropertyType: "string", Description: "City.",
					IsRequired: true, EnumValues: []string{"Oslo", "Lima"}}}, tr.Properties)
				assert.Equal(t, `{"ui":{"prefersBorder":true},"v":1.0}`, string(tr.Metadata))
				assert.Equal(t, `{"type":"object"}`, tr.InputSchemaText)
				assert.Equal(t, `{"type":"object","properties":{"t":{"type":"number"}}}`, tr.OutputSchemaText)
				assert.True(t, tr.UseWorkerInputSchema)
				assert.True(t, tr.UseResultSchema)
			},
		},
		{
			name: "keys in any case",
			binding: `{"TYPE":"McpToolTrigger","Direction":"in","NAME":"ctx","ToolName":"get_weather","DESCRIPTION":"d",` +
				`"Title":"T","TOOLPROPERTIES":` + quote(`[{"PROPERTYNAME":"city","PropertyType":"string","IsRequired":true,"ISARRAY":true}]`) +
				`,"MetaData":{"a":1},"InputSchema":"{}","OUTPUTSCHEMA":` + quote(`{"type":"object"}`) +
				`,"UseWorkerInputSchema":true,"USERESULTSCHEMA":true}`,
			check: func(t *testing.T, tr *Trigger) {
				assert.Equal(t, "ctx", tr.Name)
				assert.Equal(t, "get_weather", tr.ToolName)
				assert.Equal(t, "d", tr.Description)
				assert.Equal(t, "T", tr.Title)
				assert.Equal(t, []metadata.ToolProperty{{PropertyName: "city", PropertyType: "string", IsRequired: true, IsArray: true}}, tr.Properties)
				assert.Equal(t, `{"a":1}`, string(tr.Metadata))
				assert.Equal(t, "{}", tr.InputSchemaText)
				assert.Equal(t, `{"type":"object"}`, tr.OutputSchemaText)
				assert.True(t, tr.UseWorkerInputSchema)
				assert.True(t, tr.UseResultSchema)
			},
		},
		{
			name:    "null description",
			binding: `{"type":"mcpToolTrigger","name":"context","toolName":"t","description":null}`,
			check:   func(t *testing.T, tr *Trigger) { assert.Equal(t, "", tr.Description) },
		},
		{
			name:    "null optional keys",
			binding: triggerJSON(`"title":null,"toolProperties":null,"metadata":null,"inputSchema":null,"outputSchema":null,"useWorkerInputSchema":null,"useResultSchema":null`),
			check: func(t *testing.T, tr *Trigger) {
				assert.Equal(t, &Trigger{Function: "get_weather", File: testFile, Name: "context",
					ToolName: "get_weather", Description: "Weather."}, tr)
			},
		},
		{
			name:    "empty toolProperties array",
			binding: triggerJSON(`"toolProperties":"[]"`),
			check: func(t *testing.T, tr *Trigger) {
				assert.NotNil(t, tr.Properties)
				assert.Empty(t, tr.Properties)
			},
		},
		{
			name:    "toolProperties without enumValues",
			binding: triggerJSON(`"toolProperties":` + quote(`[{"propertyName":"n","propertyType":"number","enumValues":null},{"propertyName":"m","propertyType":"integer"}]`)),
			check: func(t *testing.T, tr *Trigger) {
				assert.Equal(t, []metadata.ToolProperty{{PropertyName: "n", PropertyType: "number"}, {PropertyName: "m", PropertyType: "integer"}}, tr.Properties)
			},
		},
		{
			name:    "metadata empty string",
			binding: triggerJSON(`"metadata":"  "`),
			check:   func(t *testing.T, tr *Trigger) { assert.Nil(t, tr.Metadata) },
		},
		{
			name:    "metadata empty object",
			binding: triggerJSON(`"metadata":"{}"`),
			check:   func(t *testing.T, tr *Trigger) { assert.Nil(t, tr.Metadata) },
		},
		{
			name:    "metadata as an object",
			binding: triggerJSON(`"metadata":{"author":"x","n":[1,2]}`),
			check:   func(t *testing.T, tr *Trigger) { assert.JSONEq(t, `{"author":"x","n":[1,2]}`, string(tr.Metadata)) },
		},
		{
			name:    "flags false",
			binding: triggerJSON(`"useWorkerInputSchema":false,"useResultSchema":false`),
			check: func(t *testing.T, tr *Trigger) {
				assert.False(t, tr.UseWorkerInputSchema)
				assert.False(t, tr.UseResultSchema)
			},
		},
		{
			name:    "schemas kept as written",
			binding: triggerJSON(`"outputSchema":" {\"type\": \"object\"} ","inputSchema":""`),
			check: func(t *testing.T, tr *Trigger) {
				assert.Equal(t, ` {"type": "object"} `, tr.OutputSchemaText)
				assert.Equal(t, "", tr.InputSchemaText)
			},
		},

		{name: "missing toolName", binding: `{"type":"mcpToolTrigger","name":"context","description":"d"}`, errs: []string{`function "get_weather" (` + testFile + `): toolName is missing`}},
		{name: "null toolName", binding: `{"type":"mcpToolTrigger","name":"context","toolName":null,"description":"d"}`, errs: []string{"toolName is empty"}},
		{name: "empty toolName", binding: `{"type":"mcpToolTrigger","name":"context","toolName":"","description":"d"}`, errs: []string{"toolName is empty"}},
		{name: "blank toolName", binding: `{"type":"mcpToolTrigger","name":"context","toolName":"  ","description":"d"}`, errs: []string{"toolName is empty"}},
		{name: "number toolName", binding: `{"type":"mcpToolTrigger","name":"context","toolName":5,"description":"d"}`, errs: []string{"toolName must be a string"}},
		{name: "missing description", binding: `{"type":"mcpToolTrigger","name":"context","toolName":"get_weather"}`,
			errs: []string{`function "get_weather", tool "get_weather" (` + testFile + `): description is missing: the key is required (its value may be null)`}},
		{name: "description not a string", binding: `{"type":"mcpToolTrigger","toolName":"t","description":["d"]}`, errs: []string{`tool "t"`, "description must be a string"}},
		{name: "title not a string", binding: triggerJSON(`"title":1`), errs: []string{"title must be a string"}},
		{name: "toolProperties as an array", binding: triggerJSON(`"toolProperties":[{"propertyName":"x"}]`), errs: []string{"toolProperties must be a string holding a JSON array"}},
		{name: "toolProperties empty string", binding: triggerJSON(`"toolProperties":""`), errs: []string{"toolProperties must be a string holding a JSON array"}},
		{name: "toolProperties object", binding: triggerJSON(`"toolProperties":"{}"`), errs: []string{"toolProperties must be a string holding a JSON array"}},
		{name: "toolProperties bad JSON", binding: triggerJSON(`"toolProperties":"[{"`), errs: []string{"toolProperties is not a valid JSON array of tool properties"}},
		{name: "toolProperties wrong item", binding: triggerJSON(`"toolProperties":"[1]"`), errs: []string{"toolProperties is not a valid JSON array of tool properties"}},
		{name: "toolProperties enum numbers", binding: triggerJSON(`"toolProperties":` + quote(`[{"propertyName":"x","enumValues":[1]}]`)), errs: []string{"toolProperties is not a valid JSON array"}},
		{name: "metadata bad JSON", binding: triggerJSON(`"metadata":"{\"a\":"`), errs: []string{"metadata is not valid JSON"}},
		{name: "metadata array", binding: triggerJSON(`"metadata":"[1]"`), errs: []string{"metadata must be a JSON object (as a string or an object)"}},
		{name: "metadata number", binding: triggerJSON(`"metadata":5`), errs: []string{"metadata must be a JSON object"}},
		{name: "outputSchema object", binding: triggerJSON(`"outputSchema":{"type":"object"}`), errs: []string{"outputSchema must be a string (JSON encoded as a string)"}},
		{name: "inputSchema object", binding: triggerJSON(`"inputSchema":{"type":"object"}`), errs: []string{"inputSchema must be a string"}},
		{name: "flag as string", binding: triggerJSON(`"useResultSchema":"true"`), errs: []string{"useResultSchema must be a boolean"}},
		{name: "flag as number", binding: triggerJSON(`"useWorkerInputSchema":1`), errs: []string{"useWorkerInputSchema must be a boolean"}},
		{name: "other binding type", binding: `{"type":"httpTrigger","toolName":"t","description":"d"}`, errs: []string{`binding type is "httpTrigger", not "mcpToolTrigger"`}},
		{
			name:    "every problem reported",
			binding: `{"type":"mcpToolTrigger","toolName":"t","title":2,"toolProperties":5,"metadata":"x","useResultSchema":"yes"}`,
			errs:    []string{"description is missing", "title must be a string", "toolProperties must be a string", "metadata is not valid JSON", "useResultSchema must be a boolean"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := parseBinding(t, tt.binding)
			tr, err := ParseTrigger(testFunction(b), b, testFile)
			if tt.errs == nil {
				require.NoError(t, err)
				tt.check(t, tr)
				return
			}
			require.Error(t, err)
			assert.Nil(t, tr)
			var te *ToolError
			require.ErrorAs(t, err, &te)
			assert.Equal(t, "get_weather", te.Function)
			assert.Equal(t, testFile, te.File)
			for _, want := range tt.errs {
				assert.Contains(t, err.Error(), want)
			}
			if len(tt.errs) > 1 {
				var joined interface{ Unwrap() []error }
				if errors.As(err, &joined) {
					for _, e := range joined.Unwrap() {
						assert.ErrorAs(t, e, &te, "every joined error is a *ToolError")
					}
				}
			}
		})
	}
}

func TestParseTriggerNil(t *testing.T) {
	_, err := ParseTrigger(nil, nil, "")
	var te *ToolError
	require.ErrorAs(t, err, &te)
	assert.Equal(t, `function "": the mcpToolTrigger binding is null`, err.Error())
}

func TestToolErrorMessage(t *testing.T) {
	inner := errors.New("boom")
	tests := []struct {
		err  *ToolError
		want string
	}{
		{&ToolError{Function: "f", Tool: "t", File: "a/f/function.json", Err: inner}, `function "f", tool "t" (a/f/function.json): boom`},
		{&ToolError{Function: "f", Tool: "t", Err: inner}, `function "f", tool "t": boom`},
		{&ToolError{Function: "f", File: "x.json", Err: inner}, `function "f" (x.json): boom`},
		{&ToolError{Function: "f"}, `function "f": unknown error`},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, tt.err.Error())
		if tt.err.Err != nil {
			assert.ErrorIs(t, tt.err, inner)
		}
	}
}

func TestOutputSchema(t *testing.T) {
	prefix := `function "get_weather", tool "get_weather" (` + testFile + `): `
	tests := []struct {
		name    string
		text    string // outputSchema value; "-" leaves the key out
		want    string // compact schema, "" for none
		class   errClass
		message string // the whole error message
	}{
		{name: "absent", text: "-"},
		{name: "empty", text: ""},
		{name: "valid", text: "{ \"type\": \"object\", \"properties\": {\"t\": {\"type\": \"number\"}} }", want: `{"type":"object","properties":{"t":{"type":"number"}}}`},
		{name: "whitespace", text: "   ", class: empty, message: prefix + "output schema: schema is empty"},
		{name: "bad JSON", text: "{not json", class: syntax, message: prefix + "output schema is not valid JSON: invalid character 'n' looking for beginning of object key string"},
		{name: "truncated", text: `{ "type": "object", "properties": { "x": "string" `, class: syntax, message: prefix + "output schema is not valid JSON: unexpected end of JSON input"},
		{name: "array root", text: `[{"type":"string"}]`, class: shape, message: prefix + "output schema must be a JSON object"},
		{name: "type string", text: `{"type":"string"}`, class: shape, message: prefix + `output schema must have a root "type" property with value "object"`},
		{name: "properties array", text: `{"type":"object","properties":[]}`, class: shape, message: prefix + `output schema "properties" must be a JSON object when present`},
		{name: "required object", text: `{"type":"object","required":{}}`, class: shape, message: prefix + `output schema "required" must be a JSON array when present`},
		{name: "metaschema", text: `{"type":"object","properties":{"x":{"type":"strin"}}}`, class: compile,
			message: prefix + "output schema is not a valid JSON Schema 2020-12 document: at '/properties/x/type': value must be one of 'array', 'boolean', 'integer', 'null', 'number', 'object', 'string'; at '/properties/x/type': got string, want array"},
		{name: "remote ref", text: `{"type":"object","$ref":"https://example.com/x"}`, class: compile,
			message: prefix + `output schema is not a valid JSON Schema 2020-12 document: "https://example.com/x" cannot be loaded: only references within the schema and the standard metaschemas resolve; nothing is fetched`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			extra := ""
			if tt.text != "-" {
				extra = `"outputSchema":` + quote(tt.text)
			}
			b := parseBinding(t, triggerJSON(extra))
			tr, err := ParseTrigger(testFunction(b), b, testFile)
			require.NoError(t, err)
			s, err := tr.OutputSchema()
			if tt.message == "" {
				require.NoError(t, err)
				if tt.want == "" {
					assert.Nil(t, s)
				} else {
					require.NotNil(t, s)
					assert.Equal(t, tt.want, s.String())
					assert.Equal(t, OutputSchema, s.Kind())
				}
				return
			}
			assert.Nil(t, s)
			require.Error(t, err)
			assert.Equal(t, tt.message, err.Error())
			var te *ToolError
			require.ErrorAs(t, err, &te)
			assert.Equal(t, "get_weather", te.Tool)
			assert.Equal(t, tt.class, classify(t, err))
		})
	}
}

func TestInputSchema(t *testing.T) {
	prefix := `function "get_weather", tool "get_weather" (` + testFile + `): `
	props := quote(`[{"propertyName":"city","propertyType":"string","description":"City.","isRequired":true}]`)
	tests := []struct {
		name     string
		extra    string
		want     string
		required []string
		class    errClass
		message  string
	}{
		{name: "no properties", want: `{"type":"object","properties":{},"required":[]}`},
		{name: "from properties", extra: `"toolProperties":` + props,
			want: `{"type":"object","properties":{"city":{"type":"string","description":"City."}},"required":["city"]}`, required: []string{"city"}},
		{name: "inputSchema ignored without the flag", extra: `"toolProperties":` + props + `,"inputSchema":"{\"type\":\"string\"}"`,
			want: `{"type":"object","properties":{"city":{"type":"string","description":"City."}},"required":["city"]}`, required: []string{"city"}},
		{name: "worker schema wins over properties", extra: `"toolProperties":` + props + `,"useWorkerInputSchema":true,"inputSchema":` +
			quote(`{"type":"object","properties":{"a":{},"b":{}},"required":["b",7,"a"]}`),
			want: `{"type":"object","properties":{"a":{},"b":{}},"required":["b",7,"a"]}`, required: []string{"b", "a"}},
		{name: "worker schema missing", extra: `"useWorkerInputSchema":true`, class: ok,
			message: prefix + "input schema is missing although useWorkerInputSchema is true"},
		{name: "worker schema empty", extra: `"useWorkerInputSchema":true,"inputSchema":""`,
			message: prefix + "input schema is missing although useWorkerInputSchema is true"},
		{name: "worker schema whitespace", extra: `"useWorkerInputSchema":true,"inputSchema":" "`, class: empty,
			message: prefix + "input schema: schema is empty"},
		{name: "worker schema not JSON", extra: `"useWorkerInputSchema":true,"inputSchema":"{"`, class: syntax,
			message: prefix + "input schema is not valid JSON: unexpected end of JSON input"},
		{name: "worker schema wrong type", extra: `"useWorkerInputSchema":true,"inputSchema":"{\"type\":\"string\"}"`, class: shape,
			message: prefix + `input schema must have a root "type" property with value "object"`},
		{name: "bad property type", extra: `"toolProperties":` + quote(`[{"propertyName":"x","propertyType":"strng"}]`), class: compile,
			message: prefix + "building from toolProperties: input schema is not a valid JSON Schema 2020-12 document: at '/properties/x/type': value must be one of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := parseBinding(t, triggerJSON(tt.extra))
			tr, err := ParseTrigger(testFunction(b), b, testFile)
			require.NoError(t, err)
			s, err := tr.InputSchema()
			if tt.message != "" {
				assert.Nil(t, s)
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.message)
				assert.Regexp(t, "^"+regexpQuote(prefix), err.Error())
				var te *ToolError
				require.ErrorAs(t, err, &te)
				if tt.class != ok {
					assert.Equal(t, tt.class, classify(t, err))
				} else {
					assert.ErrorIs(t, err, ErrMissingWorkerInputSchema)
				}
				return
			}
			require.NoError(t, err)
			require.NotNil(t, s)
			assert.Equal(t, InputSchema, s.Kind())
			assert.Equal(t, tt.want, s.String())
			assert.Equal(t, tt.required, requiredNames(s))
		})
	}
}

func regexpQuote(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '.', '+', '*', '?', '(', ')', '|', '[', ']', '{', '}', '^', '$':
			out = append(out, '\\', c)
		default:
			out = append(out, c)
		}
	}
	return string(out)
}

func TestPropertiesSchema(t *testing.T) {
	tests := []struct {
		name  string
		props []metadata.ToolProperty
		want  string
	}{
		{name: "nil", want: `{"type":"object","properties":{},"required":[]}`},
		{name: "empty", props: []metadata.ToolProperty{}, want: `{"type":"object","properties":{},"required":[]}`},
		{name: "scalar", props: []metadata.ToolProperty{{PropertyName: "a", PropertyType: "number"}},
			want: `{"type":"object","properties":{"a":{"type":"number","description":""}},"required":[]}`},
		{name: "enum", props: []metadata.ToolProperty{{PropertyName: "u", PropertyType: "string", Description: "Unit.", EnumValues: []string{"C", "F"}}},
			want: `{"type":"object","properties":{"u":{"type":"string","enum":["C","F"],"description":"Unit."}},"required":[]}`},
		{name: "empty enum", props: []metadata.ToolProperty{{PropertyName: "u", PropertyType: "string", EnumValues: []string{}}},
			want: `{"type":"object","properties":{"u":{"type":"string","description":""}},"required":[]}`},
		{name: "array", props: []metadata.ToolProperty{{PropertyName: "xs", PropertyType: "integer", IsArray: true, Description: "d"}},
			want: `{"type":"object","properties":{"xs":{"type":"array","items":{"type":"integer"},"description":"d"}},"required":[]}`},
		{name: "array with enum", props: []metadata.ToolProperty{{PropertyName: "xs", PropertyType: "string", IsArray: true, EnumValues: []string{"a"}, IsRequired: true}},
			want: `{"type":"object","properties":{"xs":{"type":"array","items":{"type":"string","enum":["a"]},"description":""}},"required":["xs"]}`},
		{name: "blank names skipped", props: []metadata.ToolProperty{{PropertyName: "", IsRequired: true}, {PropertyName: "  ", IsRequired: true}, {PropertyName: "b", PropertyType: "boolean"}},
			want: `{"type":"object","properties":{"b":{"type":"boolean","description":""}},"required":[]}`},
		{name: "required distinct in order", props: []metadata.ToolProperty{
			{PropertyName: "z", PropertyType: "string", IsRequired: true},
			{PropertyName: "a", PropertyType: "string"},
			{PropertyName: "m", PropertyType: "string", IsRequired: true},
			{PropertyName: "z", PropertyType: "number", IsRequired: true},
		}, want: `{"type":"object","properties":{"z":{"type":"number","description":""},"a":{"type":"string","description":""},"m":{"type":"string","description":""}},"required":["z","m"]}`},
		{name: "no HTML escaping", props: []metadata.ToolProperty{{PropertyName: "q<1>", PropertyType: "string", Description: `a & "b"`}},
			want: `{"type":"object","properties":{"q<1>":{"type":"string","description":"a & \"b\""}},"required":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := PropertiesSchema(tt.props)
			assert.Equal(t, tt.want, string(got))
			assert.True(t, json.Valid(got))
		})
	}
}

// TestPropertiesSchemaGolden pins the generated schema for a realistic tool
// (go test -run Golden -update rewrites it).
func TestPropertiesSchemaGolden(t *testing.T) {
	props := []metadata.ToolProperty{
		{PropertyName: "city", PropertyType: "string", Description: "City name, e.g. Seattle.", IsRequired: true},
		{PropertyName: "days", PropertyType: "integer", Description: "Forecast length in days."},
		{PropertyName: "unit", PropertyType: "string", Description: "Temperature unit.", EnumValues: []string{"celsius", "fahrenheit"}},
		{PropertyName: "fields", PropertyType: "string", Description: "Fields to include.", IsArray: true, EnumValues: []string{"temp", "wind", "rain"}},
		{PropertyName: "coordinates", PropertyType: "number", IsArray: true},
		{PropertyName: "detailed", PropertyType: "boolean", IsRequired: true},
		{PropertyName: "options", PropertyType: "object", Description: "Extra options."},
	}
	var indented bytes.Buffer
	require.NoError(t, json.Indent(&indented, PropertiesSchema(props), "", "  "))
	indented.WriteByte('\n')
	golden := filepath.Join("testdata", "properties_schema.golden.json")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(golden, indented.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run go test -run Golden -update to create it")
	assert.Equal(t, string(want), indented.String())

	s, err := ParseSchema(InputSchema, string(PropertiesSchema(props)))
	require.NoError(t, err, "the generated schema compiles")
	assert.Equal(t, []string{"city", "detailed"}, requiredNames(s))
}
