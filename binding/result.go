package binding

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// ResultError is a worker return value that cannot be turned into a tool
// result: a malformed envelope, content or content block.
type ResultError struct {
	Reason string
}

func (e *ResultError) Error() string { return "decoding the tool result: " + e.Reason }

func resultErr(format string, args ...any) error {
	return &ResultError{Reason: fmt.Sprintf(format, args...)}
}

// Decoded is a worker return value turned into an MCP tool result.
type Decoded struct {
	// Result is the tool result; never nil when decoding succeeded.
	Result *metadata.CallToolResult
	// Plain is the compact JSON value the worker returned when it was not a
	// result envelope (nil for envelopes, null, and strings that do not hold
	// JSON). [Tool.ShapeResult] may promote it to structuredContent.
	Plain json.RawMessage
	// Checked is the output check the result carries: the worker's claim
	// that it validated this structuredContent against this output schema
	// ([Schema.Digest]), "" when none. [Tool.ShapeResult] sets it once the
	// result is validated.
	Checked string
	// Issue is the output issue the worker reported
	// ([metadata.ToolResult.OutputIssue]): the message it logged for a
	// result that broke the output rules, "" when none.
	Issue string
}

// DecodeReturnValue turns a custom handler's ReturnValue into a tool result.
//
// With useResultSchema the value is the result envelope
// {"type","content","structuredContent"} as a JSON string (the object itself
// is accepted too): "call_tool_result" content is a whole CallToolResult,
// returned as it is (the envelope's structuredContent is ignored);
// "multi_content_result" content is a non-empty array of content blocks; any
// other type's content is one block whose own "type" decides its kind (text,
// image, audio, resource, resource_link). structuredContent, a string holding
// JSON, is parsed. A string that is not JSON at all is an error.
//
// A value that is not an envelope — any value without useResultSchema, or a
// JSON value that is not an object with "type" and "content" — becomes one
// text block: a string's text, or the compact JSON of any other value, which
// is also kept in Plain. A string holding JSON keeps that JSON in Plain. null
// or no value gives {"content":[]}.
//
// Errors are *ResultError.
func DecodeReturnValue(raw json.RawMessage, useResultSchema bool) (*Decoded, error) {
	v := bytes.TrimSpace(raw)
	if jsonx.IsAbsent(v) {
		return &Decoded{Result: &metadata.CallToolResult{Content: []json.RawMessage{}}}, nil
	}
	var (
		text  string // the text of a plain value's block
		inner []byte // the JSON the value holds (a string's content)
	)
	isString := v[0] == '"'
	if isString {
		if err := json.Unmarshal(v, &text); err != nil {
			return nil, resultErr("the return value is not valid JSON: %v", err)
		}
		inner = bytes.TrimSpace([]byte(text))
	} else {
		inner = v
	}

	if useResultSchema && len(inner) > 0 && inner[0] == '{' {
		// Decoding the object also checks its syntax: no separate pass.
		env, ok, err := asEnvelope(inner)
		switch {
		case err != nil && isString:
			return nil, resultErr("the return value is not a JSON result envelope: %v", err)
		case err != nil:
			return nil, resultErr("the return value is not valid JSON: %v", err)
		case ok:
			res, err := env.decode()
			if err != nil {
				return nil, err
			}
			return &Decoded{Result: res, Checked: env.checked, Issue: env.issue}, nil
		}
	}

	var value json.RawMessage // the compact JSON of a plain value, nil if none
	var buf bytes.Buffer
	if err := json.Compact(&buf, inner); err == nil && len(inner) > 0 {
		value = buf.Bytes()
	} else if !isString {
		return nil, resultErr("the return value is not valid JSON: %v", err)
	} else if useResultSchema {
		return nil, resultErr("the return value is not a JSON result envelope: %s", describeJSONError(inner, err))
	}
	if !isString {
		text = string(value)
	}
	return &Decoded{
		Result: &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent(text)}},
		Plain:  value,
	}, nil
}

func describeJSONError(data []byte, err error) string {
	if len(data) == 0 {
		return "it is empty"
	}
	return err.Error()
}

// envelope is a result envelope with its fields still raw.
type envelope struct {
	typ               string
	content           json.RawMessage // nil when absent
	structuredContent json.RawMessage // nil when absent
	checked           string
	issue             string
}

// asEnvelope reports whether obj (a JSON object) is a result
// envelope: an object with a string "type" and a "content" key, or with a
// string "type" and a "structuredContent" key (whose content is then
// missing). Keys match case-insensitively, exact spelling first.
func asEnvelope(obj json.RawMessage) (*envelope, bool, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		return nil, false, err
	}
	typRaw, hasType := metadata.LookupFoldMap(m, "type")
	if !hasType {
		return nil, false, nil
	}
	var typ string
	if json.Unmarshal(typRaw, &typ) != nil || jsonx.IsNull(typRaw) {
		return nil, false, nil
	}
	content, hasContent := metadata.LookupFoldMap(m, "content")
	structured, hasStructured := metadata.LookupFoldMap(m, "structuredContent")
	if !hasContent && !hasStructured {
		return nil, false, nil
	}
	env := &envelope{typ: typ, content: content, structuredContent: structured}
	if raw, ok := metadata.LookupFoldMap(m, "checked"); ok {
		_ = json.Unmarshal(raw, &env.checked) // not a string: no claim
	}
	if raw, ok := metadata.LookupFoldMap(m, "outputIssue"); ok {
		_ = json.Unmarshal(raw, &env.issue) // not a string: none
	}
	return env, true, nil
}

// jsonText returns the JSON a string-or-JSON field holds: the text of a JSON
// string, or the raw JSON of an object or array given directly. ok is false
// for absent or null fields.
func jsonText(raw json.RawMessage) (text []byte, ok bool, err error) {
	if jsonx.IsAbsent(raw) {
		return nil, false, nil
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, false, err
		}
		return bytes.TrimSpace([]byte(s)), true, nil
	case '{', '[':
		return raw, true, nil
	}
	return nil, false, fmt.Errorf("must be a string holding JSON, not %s", raw)
}

func (e *envelope) decode() (*metadata.CallToolResult, error) {
	text, ok, err := jsonText(e.content)
	switch {
	case err != nil:
		return nil, resultErr("the content of type %q %v", e.typ, err)
	case !ok:
		return nil, resultErr("the envelope of type %q has no content", e.typ)
	case len(text) == 0:
		return nil, resultErr("the content of type %q is empty", e.typ)
	case jsonx.IsNull(text):
		return nil, resultErr("the content of type %q is null", e.typ)
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, text); err != nil {
		return nil, resultErr("the content of type %q is not valid JSON: %v", e.typ, err)
	}
	content := compact.Bytes()

	switch {
	case strings.EqualFold(e.typ, metadata.ResultTypeCallToolResult):
		return decodeCallToolResult(content)
	case strings.EqualFold(e.typ, metadata.ResultTypeMultiContent):
		if content[0] != '[' {
			return nil, resultErr("the content of type %q must be a JSON array of content blocks", e.typ)
		}
		var blocks []json.RawMessage
		if err := json.Unmarshal(content, &blocks); err != nil {
			return nil, resultErr("the content of type %q is not valid JSON: %v", e.typ, err)
		}
		if len(blocks) == 0 {
			return nil, resultErr("no content items were produced (type %q with an empty array)", e.typ)
		}
		for i, b := range blocks {
			if err := CheckContentBlock(b); err != nil {
				return nil, resultErr("content block %d of type %q: %v", i, e.typ, err)
			}
		}
		sc, err := structuredText(e.structuredContent)
		if err != nil {
			return nil, err
		}
		return &metadata.CallToolResult{Content: blocks, StructuredContent: sc}, nil
	default:
		if err := CheckContentBlock(content); err != nil {
			return nil, resultErr("the content block of type %q: %v", e.typ, err)
		}
		sc, err := structuredText(e.structuredContent)
		if err != nil {
			return nil, err
		}
		return &metadata.CallToolResult{Content: []json.RawMessage{content}, StructuredContent: sc}, nil
	}
}

// structuredText parses the envelope's structuredContent (a string holding
// any JSON; empty means none).
func structuredText(raw json.RawMessage) (json.RawMessage, error) {
	if jsonx.IsAbsent(raw) {
		return nil, nil
	}
	text := []byte(raw)
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, resultErr("structuredContent is not valid JSON: %v", err)
		}
		text = bytes.TrimSpace([]byte(s))
		if len(text) == 0 {
			return nil, nil
		}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, text); err != nil {
		return nil, resultErr("structuredContent is not valid JSON: %v", err)
	}
	if bytes.Equal(buf.Bytes(), []byte("null")) {
		return nil, resultErr("structuredContent is null")
	}
	return buf.Bytes(), nil
}

// decodeCallToolResult decodes a call_tool_result envelope's content: a whole
// CallToolResult, taken as it is.
func decodeCallToolResult(content []byte) (*metadata.CallToolResult, error) {
	const typ = metadata.ResultTypeCallToolResult
	if content[0] != '{' {
		return nil, resultErr("the content of type %q must be a JSON object", typ)
	}
	var res metadata.CallToolResult
	if err := json.Unmarshal(content, &res); err != nil {
		return nil, resultErr("the content of type %q is not a CallToolResult: %v", typ, err)
	}
	if err := checkCallToolResult(&res, fmt.Sprintf(" of type %q", typ)); err != nil {
		return nil, err
	}
	return &res, nil
}

// checkCallToolResult checks the content blocks of a whole CallToolResult
// and normalizes it: no content is an empty list, null members are absent.
// where says where the result came from, for the error.
func checkCallToolResult(res *metadata.CallToolResult, where string) error {
	if res.Content == nil {
		res.Content = []json.RawMessage{}
	}
	for i, b := range res.Content {
		if err := CheckContentBlock(b); err != nil {
			return resultErr("content block %d%s: %v", i, where, err)
		}
	}
	if jsonx.IsNull(res.StructuredContent) {
		res.StructuredContent = nil
	}
	if jsonx.IsNull(res.Meta) {
		res.Meta = nil
	}
	return nil
}

// ProblemNoStructuredContent is the problem reported for a result of a tool
// with an output schema that carries no structuredContent.
const ProblemNoStructuredContent = "the result has no structuredContent, but the tool declares an output schema"

// OutputIssue is a result that breaks its tool's output rules: its
// structuredContent does not match the output schema (Err is a
// *ValidationError) or its content breaks the declared content kinds (Err
// is a *ContentKindError). It stays a type apart from [InputIssue], whose
// shape it shares: callers tell a replaced result from a refused call with
// errors.As. Both messages are made by issueMessage.
type OutputIssue struct {
	Tool string
	// Mode is what was done: under [metadata.ValidationStrict] the result
	// was replaced by an isError result carrying this message; under
	// [metadata.ValidationWarn] it was delivered as it was.
	Mode metadata.OutputValidation
	Err  error
}

// Error is the message of the isError result, naming the tool and giving
// the JSON pointers of the problems.
func (i *OutputIssue) Error() string { return issueMessage("Output", "output", i.Tool, i.Err) }

func (i *OutputIssue) Unwrap() error { return i.Err }

// LogMessage is the line both sides log for the issue: the message, and
// under warn that the result was delivered anyway.
func (i *OutputIssue) LogMessage() string {
	if i.Mode == metadata.ValidationWarn {
		return i.Error() + " (delivered as is: outputValidation is warn)"
	}
	return i.Error()
}

// ShapeResult applies the tool's output rules to a decoded result, in place,
// with the tool's own settings over app's (see [Tool.OutputSettings]). The
// worker runs it before replying and the host again on what it receives.
//
// Unless validation is off or the result is an isError result, it checks
// structuredContent against the compiled output schema and the content
// against the declared content kinds ([CheckContentKinds]). A result
// without structuredContent whose Plain value is a JSON object matching the
// schema gets it as structuredContent; one that still has none breaks the
// schema. structuredContent is decoded once, and not at all when the result
// carries a check ([Decoded.Checked]) equal to [Schema.Digest] of this very
// content: the worker already validated these bytes against this schema
// text.
//
// A broken result gives an *OutputIssue. Under strict, d.Result is replaced
// by an isError result with the issue's message; under warn it is kept. At
// last the text copy of structuredContent is added as the tool's TextCopy
// says ([metadata.AddTextCopy]).
func (t *Tool) ShapeResult(d *Decoded, app metadata.OutputSettings) *OutputIssue {
	issue := t.CheckResult(d, app)
	if d != nil {
		metadata.AddTextCopy(d.Result, t.OutputSettings(app).TextCopy)
	}
	return issue
}

// CheckResult is [Tool.ShapeResult] without the text copy: a worker whose
// reply is shaped again by the host leaves the copy to the host, which
// makes it once instead of comparing it with the worker's.
func (t *Tool) CheckResult(d *Decoded, app metadata.OutputSettings) *OutputIssue {
	if d == nil || d.Result == nil {
		return nil
	}
	set := t.OutputSettings(app)
	res := d.Result
	if jsonx.IsNull(res.StructuredContent) {
		res.StructuredContent = nil
	}
	var issue *OutputIssue
	if set.Validation != metadata.ValidationOff && !res.IsError {
		if err := t.checkOutput(d); err != nil {
			issue = &OutputIssue{Tool: t.Trigger.ToolName, Mode: set.Validation, Err: err}
			if set.Validation == metadata.ValidationStrict {
				d.Result = metadata.ErrorResult(issue.Error())
				d.Checked = ""
				return issue
			}
		}
	}
	return issue
}

// checkOutput checks d against the schema and the content kinds.
func (t *Tool) checkOutput(d *Decoded) error {
	res := d.Result
	claimed := d.Checked
	d.Checked = ""
	if t.Output != nil {
		if len(res.StructuredContent) == 0 {
			// A tool with an output schema must return structured content
			// (clients reject a result without it). A plain JSON object that
			// matches the schema becomes it; one that does not says why.
			if len(d.Plain) > 0 && d.Plain[0] == '{' {
				if v, err := DecodeJSON(d.Plain); err == nil {
					if err := t.Output.Validate(v); err != nil {
						return err
					}
					res.StructuredContent = d.Plain
				}
			}
			if len(res.StructuredContent) == 0 {
				return &ValidationError{Kind: OutputSchema, Problems: []Problem{{Message: ProblemNoStructuredContent}}}
			}
		}
		digest := t.Output.Digest(res.StructuredContent)
		if claimed != digest && !t.Output.certainlyValid(res.StructuredContent) {
			v, err := DecodeJSON(res.StructuredContent)
			if err != nil {
				return &ValidationError{Kind: OutputSchema, Problems: []Problem{{Message: "structuredContent is not valid JSON: " + err.Error()}}}
			}
			if err := t.Output.Validate(v); err != nil {
				return err
			}
		}
		d.Checked = digest
	}
	return CheckContentKinds(t.Trigger.ContentKinds, res)
}
