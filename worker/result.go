package worker

import (
	"encoding/base64"
	"encoding/json"
	"fmt"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/internal/jsonx"
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
		if !jsonx.IsNull(data) {
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
//     error, no output issue → that block with its own type (a plain text
//     result is type "text");
//   - anything else → type call_tool_result holding the whole
//     CallToolResult, with the envelope's structuredContent set to the same
//     JSON, checked (the output check, see binding.Schema.Digest) when
//     the result was validated, and outputIssue when it broke the output
//     rules.
func envelope(res *metadata.CallToolResult, chk outputCheck) *metadata.ToolResult {
	if len(res.StructuredContent) == 0 && !res.IsError && res.Meta == nil && len(res.Content) == 1 && chk.issue == "" {
		if typ := metadata.ContentType(res.Content[0]); singleBlockTypes[typ] {
			return &metadata.ToolResult{Type: typ, Content: string(res.Content[0])}
		}
	}
	env := &metadata.ToolResult{Type: metadata.ResultTypeCallToolResult, Content: string(res.AppendJSON(nil)), Checked: chk.digest, OutputIssue: chk.issue}
	if len(res.StructuredContent) > 0 {
		s := string(res.StructuredContent)
		env.StructuredContent = &s
	}
	return env
}

func compact(c json.RawMessage) json.RawMessage {
	out, err := jsonx.AppendCompact(nil, c)
	if err != nil {
		return c
	}
	return out
}

// The replies are written by hand, in one pass per level of string
// encoding, instead of through encoding/json, which would check and compact
// every raw member again at each level. They are byte for byte what
// metadata.Marshal gives for the same values, because every raw member of a
// result the worker builds is compact JSON already: callToolResult compacts
// the blocks and encodes structured content and _meta with metadata.Marshal,
// and the blocks binding adds are metadata.TextContent.

// appendLogs appends the Logs array of a reply.
func appendLogs(dst []byte, logs []string) []byte {
	dst = append(dst, '[')
	for i, l := range logs {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = metadata.AppendJSONString(dst, l)
	}
	return append(dst, ']')
}

// appendInvocationResponse appends today's custom-handler reply,
// {"Outputs":{},"Logs":[…],"ReturnValue":"<the envelope as a JSON string>"},
// as metadata.Marshal encodes a metadata.InvocationResponse whose
// ReturnValue is the envelope encoded and then encoded again as a string.
func appendInvocationResponse(dst []byte, logs []string, env *metadata.ToolResult) []byte {
	inner := make([]byte, 0, 2*len(env.Content)+64)
	inner = append(inner, `{"content":`...)
	inner = metadata.AppendJSONString(inner, env.Content)
	inner = append(inner, `,"type":`...)
	inner = metadata.AppendJSONString(inner, env.Type)
	inner = append(inner, `,"structuredContent":`...)
	if env.StructuredContent == nil {
		inner = append(inner, "null"...)
	} else {
		inner = metadata.AppendJSONString(inner, *env.StructuredContent)
	}
	if env.Checked != "" {
		inner = append(inner, `,"checked":`...)
		inner = metadata.AppendJSONString(inner, env.Checked)
	}
	if env.OutputIssue != "" {
		inner = append(inner, `,"outputIssue":`...)
		inner = metadata.AppendJSONString(inner, env.OutputIssue)
	}
	inner = append(inner, '}')

	dst = append(dst, `{"Outputs":{},"Logs":`...)
	dst = appendLogs(dst, logs)
	dst = append(dst, `,"ReturnValue":`...)
	dst = metadata.AppendJSONString(dst, string(inner))
	return append(dst, '}')
}

// appendDirectReply appends the direct reply funchost asks for
// ([metadata.DirectReply]): the result as JSON, encoded once.
func appendDirectReply(dst []byte, logs []string, res *metadata.CallToolResult, chk outputCheck) []byte {
	dst = append(dst, `{"Logs":`...)
	dst = appendLogs(dst, logs)
	dst = append(dst, `,"Result":`...)
	dst = res.AppendJSON(dst)
	if chk.digest != "" {
		dst = append(dst, `,"Checked":`...)
		dst = metadata.AppendJSONString(dst, chk.digest)
	}
	if chk.issue != "" {
		dst = append(dst, `,"OutputIssue":`...)
		dst = metadata.AppendJSONString(dst, chk.issue)
	}
	return append(dst, '}')
}

// replySize estimates the size of a reply of res with logs (each line
// escaped a little), so that writing it takes one allocation.
func replySize(logs []string, res *metadata.CallToolResult) int {
	n := 128 + len(res.StructuredContent) + len(res.Meta)
	for _, l := range logs {
		n += len(l) + len(l)/8 + 3
	}
	for _, c := range res.Content {
		n += len(c) + 1
	}
	return n
}
