package binding

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

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
	if len(v) == 0 || bytes.Equal(v, []byte("null")) {
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
			return &Decoded{Result: res}, nil
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
	typRaw, hasType := lookupFold(m, "type")
	if !hasType {
		return nil, false, nil
	}
	var typ string
	if json.Unmarshal(typRaw, &typ) != nil || isNull(typRaw) {
		return nil, false, nil
	}
	content, hasContent := lookupFold(m, "content")
	structured, hasStructured := lookupFold(m, "structuredContent")
	if !hasContent && !hasStructured {
		return nil, false, nil
	}
	return &envelope{typ: typ, content: content, structuredContent: structured}, true, nil
}

func lookupFold(m map[string]json.RawMessage, key string) (json.RawMessage, bool) {
	if v, ok := m[key]; ok {
		return v, true
	}
	for k, v := range m {
		if strings.EqualFold(k, key) {
			return v, true
		}
	}
	return nil, false
}

// jsonText returns the JSON a string-or-JSON field holds: the text of a JSON
// string, or the raw JSON of an object or array given directly. ok is false
// for absent or null fields.
func jsonText(raw json.RawMessage) (text []byte, ok bool, err error) {
	if len(raw) == 0 || isNull(raw) {
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
	case bytes.Equal(text, []byte("null")):
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
			if err := checkBlock(b); err != nil {
				return nil, resultErr("content block %d of type %q: %v", i, e.typ, err)
			}
		}
		sc, err := structuredText(e.structuredContent)
		if err != nil {
			return nil, err
		}
		return &metadata.CallToolResult{Content: blocks, StructuredContent: sc}, nil
	default:
		if err := checkBlock(content); err != nil {
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
	if len(raw) == 0 || isNull(raw) {
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
	if res.Content == nil {
		res.Content = []json.RawMessage{}
	}
	for i, b := range res.Content {
		if err := checkBlock(b); err != nil {
			return nil, resultErr("content block %d of type %q: %v", i, typ, err)
		}
	}
	if isNull(res.StructuredContent) {
		res.StructuredContent = nil
	}
	if isNull(res.Meta) {
		res.Meta = nil
	}
	return &res, nil
}

// checkBlock checks one MCP content block: an object whose "type" is a known
// block kind, with that kind's required fields.
func checkBlock(block json.RawMessage) error {
	b := bytes.TrimSpace(block)
	if len(b) == 0 || b[0] != '{' {
		return fmt.Errorf("a content block must be a JSON object, not %s", abbreviate(b))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	var typ string
	if raw, ok := m["type"]; !ok || json.Unmarshal(raw, &typ) != nil || isNull(raw) {
		return fmt.Errorf(`a content block needs a string "type"`)
	}
	var need []string
	switch typ {
	case "text":
		need = []string{"text"}
	case "image", "audio":
		need = []string{"data", "mimeType"}
	case "resource_link":
		need = []string{"uri", "name"}
	case "resource":
		raw, ok := m["resource"]
		if !ok || len(raw) == 0 || raw[0] != '{' {
			return fmt.Errorf(`the "resource" block needs a "resource" object`)
		}
		var res map[string]json.RawMessage
		if err := json.Unmarshal(raw, &res); err != nil {
			return fmt.Errorf(`the "resource" block needs a "resource" object`)
		}
		if err := needStrings(`the "resource" block's "resource"`, res, "uri"); err != nil {
			return err
		}
		_, hasText := res["text"]
		_, hasBlob := res["blob"]
		if !hasText && !hasBlob {
			return fmt.Errorf(`the "resource" block's "resource" needs "text" or "blob"`)
		}
		return nil
	default:
		return fmt.Errorf("unknown content block type %q", typ)
	}
	return needStrings(fmt.Sprintf("the %q block", typ), m, need...)
}

func needStrings(what string, m map[string]json.RawMessage, keys ...string) error {
	for _, k := range keys {
		raw, ok := m[k]
		var s string
		if !ok || isNull(raw) || json.Unmarshal(raw, &s) != nil {
			return fmt.Errorf("%s needs a string %q", what, k)
		}
	}
	return nil
}

func abbreviate(b []byte) string {
	const max = 40
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// ProblemNoStructuredContent is the problem reported for a result of a tool
// with an output schema that carries no structuredContent.
const ProblemNoStructuredContent = "the result has no structuredContent, but the tool declares an output schema"

// ShapeResult applies the tool's output schema to a decoded result, in place.
// Error results (isError) and tools without an output schema pass unchanged.
//
// With validate, a result without structuredContent whose Plain value matches
// the schema gets it as structuredContent (its text block is already there);
// one that still has none returns a *ValidationError;
// a result with structuredContent has it decoded once and validated against
// the compiled schema — a mismatch returns a *ValidationError and leaves the
// result as it was. Without validate, nothing is validated or promoted.
//
// Either way, when the result ends with structuredContent and has no text
// block, a text block holding the same JSON is appended for clients that do
// not read structuredContent.
func (t *Tool) ShapeResult(d *Decoded, validate bool) error {
	if d == nil || d.Result == nil || d.Result.IsError || t.Output == nil {
		return nil
	}
	res := d.Result
	if isNull(res.StructuredContent) {
		res.StructuredContent = nil
	}
	if validate {
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
		} else {
			v, err := DecodeJSON(res.StructuredContent)
			if err != nil {
				return resultErr("structuredContent is not valid JSON: %v", err)
			}
			if err := t.Output.Validate(v); err != nil {
				return err
			}
		}
	}
	if len(res.StructuredContent) > 0 && !hasTextBlock(res.Content) {
		res.Content = append(res.Content, metadata.TextContent(string(res.StructuredContent)))
	}
	return nil
}

func hasTextBlock(blocks []json.RawMessage) bool {
	for _, b := range blocks {
		if blockType(b) == "text" {
			return true
		}
	}
	return false
}

// blockType returns a content block's "type" like [metadata.ContentType],
// without decoding the block when it starts with the "type" key, as the
// blocks funcmcp writes do: the text of a large block is not scanned.
func blockType(block json.RawMessage) string {
	const head = `{"type":"`
	if bytes.HasPrefix(block, []byte(head)) {
		rest := block[len(head):]
		if i := bytes.IndexByte(rest, '"'); i >= 0 && bytes.IndexByte(rest[:i], '\\') < 0 &&
			len(rest) > i+1 && (rest[i+1] == ',' || rest[i+1] == '}') {
			return string(rest[:i])
		}
	}
	return metadata.ContentType(block)
}
