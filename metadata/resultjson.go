package metadata

import (
	"encoding/json"
	"fmt"

	"github.com/funcmcp/funcmcp/internal/jsonx"
)

// AppendJSON appends r as the MCP CallToolResult: "content" always an array
// (a nil slice is []), "structuredContent" and "_meta" left out when absent
// or null, "isError" only when true. Raw members are written as they are:
// the caller holds compact, valid JSON (what [Marshal] and the content
// constructors of this package make). It is the one writer of a result; the
// worker's replies and the host's answers both use it.
func (r *CallToolResult) AppendJSON(dst []byte) []byte {
	dst, _ = r.appendJSON(dst, "", false)
	return dst
}

// AppendCheckedJSON is [CallToolResult.AppendJSON] for raw members that come
// from elsewhere: each is checked and compacted as it is written (so the
// result also fits on one line of an SSE event). head, when not empty, is
// written first inside the object: members with their trailing comma. On
// error dst holds a partial result and must not be used.
func (r *CallToolResult) AppendCheckedJSON(dst []byte, head string) ([]byte, error) {
	return r.appendJSON(dst, head, true)
}

// MarshalJSON is [CallToolResult.AppendCheckedJSON] with no head, so that
// encoding/json and [Marshal] write the same bytes as the writers above.
func (r CallToolResult) MarshalJSON() ([]byte, error) {
	return r.appendJSON(nil, "", true)
}

func (r *CallToolResult) appendJSON(dst []byte, head string, check bool) ([]byte, error) {
	// member appends raw; block >= 0 names a content block (the name is
	// made only for an error: the call path stays free of formatting).
	member := func(what string, block int, raw json.RawMessage) error {
		if !check {
			dst = append(dst, raw...)
			return nil
		}
		var err error
		if dst, err = jsonx.AppendCompact(dst, raw); err != nil {
			if block >= 0 {
				what = fmt.Sprintf("content block %d", block)
			}
			return fmt.Errorf("encoding %s: %w", what, err)
		}
		return nil
	}
	dst = append(dst, '{')
	dst = append(dst, head...)
	dst = append(dst, `"content":[`...)
	for i, block := range r.Content {
		if i > 0 {
			dst = append(dst, ',')
		}
		if err := member("", i, block); err != nil {
			return dst, err
		}
	}
	dst = append(dst, ']')
	if !jsonx.IsAbsent(r.StructuredContent) {
		dst = append(dst, `,"structuredContent":`...)
		if err := member("structuredContent", -1, r.StructuredContent); err != nil {
			return dst, err
		}
	}
	if r.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	if !jsonx.IsAbsent(r.Meta) {
		dst = append(dst, `,"_meta":`...)
		if err := member("_meta", -1, r.Meta); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}
