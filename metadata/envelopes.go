package metadata

import (
	"encoding/json"
)

// ResourceResult is the envelope a worker returns (as a JSON string in
// ReturnValue) for a resources/read invocation: Content is the JSON text of
// one [ResourceContents]. It is the extension's Trigger/McpResourceResult.cs
// ({"content": "<json>"}), which its ResourceReturnValueBinder tries first;
// a ReturnValue string that is not this envelope is taken as the text of
// the resource. A resource read through the extension has exactly one
// contents item.
type ResourceResult struct {
	Content string `json:"content"`
}

// ResourceContents is one item of a ReadResourceResult's contents: text
// (Text set) or binary (Blob set, base64). The extension's binder reads the
// keys exactly as spelled (uri, mimeType, text, blob, _meta); an empty uri
// or mimeType is filled in from the request and the binding.
type ResourceContents struct {
	URI      string
	MimeType string
	Text     *string
	Blob     *string // base64
	Meta     json.RawMessage
}

// MarshalJSON writes {"uri","mimeType"?,"text"|"blob","_meta"?} in that
// order, as the extension's ResourceContents converter writes it; _meta
// must be compact JSON.
func (c ResourceContents) MarshalJSON() ([]byte, error) {
	return c.AppendJSON(nil), nil
}

// AppendJSON appends c as [ResourceContents.MarshalJSON] writes it.
func (c ResourceContents) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"uri":`...)
	dst = AppendJSONString(dst, c.URI)
	if c.MimeType != "" {
		dst = append(dst, `,"mimeType":`...)
		dst = AppendJSONString(dst, c.MimeType)
	}
	if c.Blob != nil {
		dst = append(dst, `,"blob":`...)
		dst = AppendJSONString(dst, *c.Blob)
	} else if c.Text != nil {
		dst = append(dst, `,"text":`...)
		dst = AppendJSONString(dst, *c.Text)
	}
	if len(c.Meta) > 0 {
		dst = append(dst, `,"_meta":`...)
		dst = append(dst, c.Meta...)
	}
	return append(dst, '}')
}

// Prompt result envelope types (the extension's McpConstants.cs
// PromptResultContentTypes).
const (
	// PromptResultTypeGetPromptResult: content is a whole GetPromptResult.
	PromptResultTypeGetPromptResult = "get_prompt_result"
	// PromptResultTypeMessages: content is a JSON array of PromptMessage.
	PromptResultTypeMessages = "prompt_messages"
)

// PromptResult is the envelope a worker returns (as a JSON string in
// ReturnValue) for a prompts/get invocation of a prompt trigger with
// useResultSchema: the extension's Trigger/McpPromptResult.cs, {"content":
// "<json>", "type": "<kind>"}, which its PromptReturnValueBinder decodes by
// Type (case-insensitively).
type PromptResult struct {
	Content string `json:"content"`
	Type    string `json:"type"`
}

// GetPromptResult is the MCP prompts/get result.
type GetPromptResult struct {
	Description string          `json:"description,omitempty"`
	Messages    []PromptMessage `json:"messages"`
	Meta        json.RawMessage `json:"_meta,omitempty"`
}

// PromptMessage is one message of a prompt: a role ("user" or "assistant")
// and one content block.
type PromptMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// Prompt message roles.
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
)

// ReadResourceResult is the MCP resources/read result.
type ReadResourceResult struct {
	Contents []ResourceContents `json:"contents"`
}

// EmbeddedResourceContent returns an embedded resource content block,
// {"type":"resource","resource":<contents>}.
func EmbeddedResourceContent(c ResourceContents) json.RawMessage {
	dst := []byte(`{"type":"resource","resource":`)
	dst = c.AppendJSON(dst)
	return append(dst, '}')
}
