package metadata

import (
	"encoding/json"
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
}

// CallToolResult is the MCP tools/call result. Content blocks are kept as raw
// JSON objects ({"type":"text","text":…}, {"type":"image","data":…,"mimeType":…}, …).
type CallToolResult struct {
	Content           []json.RawMessage `json:"content"`
	StructuredContent json.RawMessage   `json:"structuredContent,omitempty"`
	IsError           bool              `json:"isError,omitempty"`
	Meta              json.RawMessage   `json:"_meta,omitempty"`
}

// TextContent returns a text content block.
func TextContent(text string) json.RawMessage {
	data, _ := Marshal(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{"text", text})
	return data
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

// ContentType returns a content block's "type", or "" when it has none.
func ContentType(block json.RawMessage) string {
	var head struct {
		Type string `json:"type"`
	}
	_ = json.Unmarshal(block, &head)
	return head.Type
}
