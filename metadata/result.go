package metadata

import (
	"bytes"
	"encoding/json"
	"strings"
)

// Result envelope types (the ToolResult "type" discriminator).
const (
	ResultTypeText           = "text"
	ResultTypeImage          = "image"
	ResultTypeAudio          = "audio"
	ResultTypeResource       = "resource"
	ResultTypeResourceLink   = "resource_link"
	ResultTypeMultiContent   = "multi_content_result"
	ResultTypeCallToolResult = "call_tool_result"
)

// ToolResult is the result envelope a worker returns (as a JSON string in
// ReturnValue) for a tool with useResultSchema. Content and StructuredContent
// are themselves JSON text: one content block, an array of blocks
// (multi_content_result) or a whole CallToolResult (call_tool_result).
type ToolResult struct {
	Content           string  `json:"content"`
	Type              string  `json:"type"`
	StructuredContent *string `json:"structuredContent"`
	// Checked, set by a funcmcp worker, claims that it validated the
	// structuredContent against the tool's output schema: a digest of both
	// (see binding.Schema.Digest). The Functions host ignores it; funcmcp's
	// host skips its own validation of exactly those bytes against exactly
	// that schema.
	Checked string `json:"checked,omitempty"`
	// OutputIssue, set by a funcmcp worker, is the message it logged for a
	// result that broke the tool's output rules (under strict the result is
	// the isError result naming the problems). The Functions host ignores
	// it; funcmcp's host logs it at the level of its own output issues
	// instead of as one more line of the worker's Logs.
	OutputIssue string `json:"outputIssue,omitempty"`
}

// CallToolResult is the MCP tools/call result. Content blocks are kept as raw
// JSON objects ({"type":"text","text":…}, {"type":"image","data":…,"mimeType":…}, …).
type CallToolResult struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
	IsError           bool              `json:"isError,omitempty"`
	Meta              json.RawMessage   `json:"_meta,omitempty"`
}

// TextContent returns a text content block, as [Marshal] encodes it: every
// call's text mirror is one, written here without reflection.
func TextContent(text string) json.RawMessage {
	// Room for the text with its quotes and backslashes escaped (a JSON
	// text mirror has many), so that the block is one allocation.
	escaped := strings.Count(text, `"`) + strings.Count(text, `\`)
	return appendTextContent(make([]byte, 0, len(textHead)+len(text)+escaped+2+len(textTail)), text)
}

const textHead, textTail = `{"type":"text","text":`, `}`

// appendTextContent appends the text block TextContent returns.
func appendTextContent(dst []byte, text string) []byte {
	dst = AppendJSONString(append(dst, textHead...), text)
	return append(dst, textTail...)
}

// ErrorResult returns an isError result with one text block holding text:
// the failure result the worker and the hosts send.
func ErrorResult(text string) *CallToolResult {
	return &CallToolResult{Content: []json.RawMessage{TextContent(text)}, IsError: true}
}

// ImageContent returns an image content block; data is base64.
func ImageContent(data, mimeType string) json.RawMessage {
	return mediaContent("image", data, mimeType)
}

// AudioContent returns an audio content block; data is base64.
func AudioContent(data, mimeType string) json.RawMessage {
	return mediaContent("audio", data, mimeType)
}

func mediaContent(typ, data, mimeType string) json.RawMessage {
	out, _ := Marshal(struct {
		Type     string `json:"type"`
		Data     string `json:"data"`
		MimeType string `json:"mimeType"`
	}{typ, data, mimeType})
	return out
}

// ContentType returns a content block's "type", or "" when it has none. A
// block that starts with the "type" key, as the blocks funcmcp writes do, is
// read without decoding the rest of it: the text of a large block is not
// scanned.
func ContentType(block json.RawMessage) string {
	const head = `{"type":"`
	if bytes.HasPrefix(block, []byte(head)) {
		rest := block[len(head):]
		if i := bytes.IndexByte(rest, '"'); i >= 0 && bytes.IndexByte(rest[:i], '\\') < 0 &&
			len(rest) > i+1 && (rest[i+1] == ',' || rest[i+1] == '}') {
			switch t := rest[:i]; string(t) { // the known types, not copied
			case ResultTypeText:
				return ResultTypeText
			case ResultTypeImage:
				return ResultTypeImage
			case ResultTypeAudio:
				return ResultTypeAudio
			case ResultTypeResource:
				return ResultTypeResource
			case ResultTypeResourceLink:
				return ResultTypeResourceLink
			default:
				return string(t)
			}
		}
	}
	var h struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(block, &h)
	return h.Type
}
