package worker

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/funcmcp/funcmcp/binding"
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
	// used as is) and sent as structuredContent, checked against the tool's
	// output schema. A text copy is added for older clients as the tool's
	// [TextCopy] says.
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

// callToolResult turns a handler's result into the MCP result: every block
// checked with [binding.CheckContentBlock] and compacted, structured content
// and _meta encoded. The text copy is not added here (see
// [binding.Tool.ShapeResult]).
func callToolResult(r *Result) (*metadata.CallToolResult, error) {
	if r == nil {
		r = &Result{}
	}
	res := &metadata.CallToolResult{Content: make([]json.RawMessage, 0, len(r.Content)+1), IsError: r.IsError}
	for i, c := range r.Content {
		if err := binding.CheckContentBlock(c); err != nil {
			return nil, fmt.Errorf("content block %d: %w", i, err)
		}
		res.Content = append(res.Content, compact(c))
	}
	if r.StructuredContent != nil {
		data, err := metadata.Marshal(r.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("encoding structured content: %w", err)
		}
		if !bytes.Equal(data, []byte("null")) {
			res.StructuredContent = data // Marshal output is compact, a json.RawMessage's too
		}
	}
	if r.Meta != nil {
		meta, err := metadata.Marshal(r.Meta)
		if err != nil {
			return nil, fmt.Errorf("encoding _meta: %w", err)
		}
		res.Meta = meta
	}
	return res, nil
}

// envelope turns a result into the ToolResult envelope, the value the
// worker returns for a tool with useResultSchema:
//   - one block of a known type, no structured content, no _meta, not an
//     error → that block with its own type (a plain text result is type
//     "text");
//   - anything else → type call_tool_result holding the whole
//     CallToolResult, with the envelope's structuredContent set to the same
//     JSON, and checked (the output check, see binding.Schema.Digest) when
//     the result was validated.
func envelope(res *metadata.CallToolResult, checked string) (*metadata.ToolResult, error) {
	if len(res.StructuredContent) == 0 && !res.IsError && res.Meta == nil && len(res.Content) == 1 {
		if typ := metadata.ContentType(res.Content[0]); singleBlockTypes[typ] {
			return &metadata.ToolResult{Type: typ, Content: string(res.Content[0])}, nil
		}
	}
	data, err := metadata.Marshal(res)
	if err != nil {
		return nil, fmt.Errorf("encoding the result: %w", err)
	}
	env := &metadata.ToolResult{Type: metadata.ResultTypeCallToolResult, Content: string(data), Checked: checked}
	if len(res.StructuredContent) > 0 {
		s := string(res.StructuredContent)
		env.StructuredContent = &s
	}
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
	env, err := envelope(&metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent(msg)}, IsError: true}, "")
	if err != nil { // cannot happen: a text block always encodes
		panic(errors.Join(errors.New("worker: encoding an error result"), err))
	}
	return env
}
