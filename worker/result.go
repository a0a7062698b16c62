package worker

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/funcmcp/funcmcp/metadata"
)

// Content is one MCP content block as JSON ({"type":"text","text":…}, …).
// Build blocks with [Text], [Image] and [Audio], or write any block the MCP
// specification defines as raw JSON.
type Content = json.RawMessage

// Text returns a text content block.
func Text(s string) Content { return metadata.TextContent(s) }

// Image returns an image content block; data is base64-encoded for you.
func Image(data []byte, mimeType string) Content {
	return metadata.ImageContent(base64.StdEncoding.EncodeToString(data), mimeType)
}

// Audio returns an audio content block; data is base64-encoded for you.
func Audio(data []byte, mimeType string) Content {
	return metadata.AudioContent(base64.StdEncoding.EncodeToString(data), mimeType)
}

// Result is what a raw [ToolHandler] returns.
type Result struct {
	// Content blocks shown to the model and the user.
	Content []Content
	// StructuredContent, when not nil, is JSON-encoded (a json.RawMessage is
	// used as is) and sent as structuredContent. A text block holding the
	// same JSON is added when Content has no text block, for older clients.
	StructuredContent any
	// IsError marks the result as a tool error.
	IsError bool
	// Meta, when not nil, is sent as the result's _meta.
	Meta map[string]any
}

// TextResult returns a result with one text block.
func TextResult(s string) *Result { return &Result{Content: []Content{Text(s)}} }

// ErrorResult returns an isError result with one text block.
func ErrorResult(text string) *Result {
	return &Result{Content: []Content{Text(text)}, IsError: true}
}

// ErrorResultf returns an isError result with one text block, formatted as
// by fmt.Sprintf.
func ErrorResultf(format string, args ...any) *Result {
	return ErrorResult(fmt.Sprintf(format, args...))
}

// singleBlockTypes are the envelope types the host decodes as one block.
var singleBlockTypes = map[string]bool{
	metadata.ResultTypeText:         true,
	metadata.ResultTypeImage:        true,
	metadata.ResultTypeAudio:        true,
	metadata.ResultTypeResource:     true,
	metadata.ResultTypeResourceLink: true,
}

// envelope turns a result into the ToolResult envelope, the value the
// worker returns for a tool with useResultSchema:
//   - one block of a known type, no structured content, not an error →
//     that block with its own type (a plain text result is type "text");
//   - anything else → type call_tool_result holding the whole CallToolResult,
//     with the envelope's structuredContent set to the same JSON.
func envelope(r *Result) (*metadata.ToolResult, error) {
	if r == nil {
		r = &Result{}
	}
	for i, c := range r.Content {
		if !json.Valid(c) || len(bytes.TrimSpace(c)) == 0 || bytes.TrimSpace(c)[0] != '{' {
			return nil, fmt.Errorf("content block %d is not a JSON object", i)
		}
	}
	var structured json.RawMessage
	if r.StructuredContent != nil {
		data, err := metadata.Marshal(r.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("encoding structured content: %w", err)
		}
		if !bytes.Equal(data, []byte("null")) {
			structured = data // Marshal output is compact, a json.RawMessage's too
		}
	}
	if structured == nil && !r.IsError && r.Meta == nil && len(r.Content) == 1 {
		if typ := metadata.ContentType(r.Content[0]); singleBlockTypes[typ] {
			return &metadata.ToolResult{Type: typ, Content: string(compact(r.Content[0]))}, nil
		}
	}
	ctr := metadata.CallToolResult{Content: make([]json.RawMessage, 0, len(r.Content)+1), IsError: r.IsError}
	hasText := false
	for _, c := range r.Content {
		ctr.Content = append(ctr.Content, compact(c))
		hasText = hasText || metadata.ContentType(c) == metadata.ResultTypeText
	}
	env := &metadata.ToolResult{Type: metadata.ResultTypeCallToolResult}
	if structured != nil {
		ctr.StructuredContent = structured
		if !hasText {
			ctr.Content = append(ctr.Content, metadata.TextContent(string(structured)))
		}
		s := string(structured)
		env.StructuredContent = &s
	}
	if r.Meta != nil {
		meta, err := metadata.Marshal(r.Meta)
		if err != nil {
			return nil, fmt.Errorf("encoding _meta: %w", err)
		}
		ctr.Meta = meta
	}
	data, err := metadata.Marshal(ctr)
	if err != nil {
		return nil, fmt.Errorf("encoding the result: %w", err)
	}
	env.Content = string(data)
	return env, nil
}

func compact(c json.RawMessage) json.RawMessage {
	var buf bytes.Buffer
	if json.Compact(&buf, c) != nil {
		return c
	}
	return buf.Bytes()
}

// returnValue encodes the envelope as the JSON string the host expects in
// ReturnValue.
func returnValue(env *metadata.ToolResult) (json.RawMessage, error) {
	inner, err := metadata.Marshal(env)
	if err != nil {
		return nil, err
	}
	return metadata.Marshal(string(inner))
}

// errorEnvelope is the envelope of an isError result with one text block.
func errorEnvelope(msg string) *metadata.ToolResult {
	env, err := envelope(&Result{Content: []Content{Text(msg)}, IsError: true})
	if err != nil { // cannot happen: a text block always encodes
		panic(errors.Join(errors.New("worker: encoding an error result"), err))
	}
	return env
}
