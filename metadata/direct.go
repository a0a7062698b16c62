package metadata

import (
	"mime"
	"strings"
	"unicode/utf8"
)

// MediaTypeDirectResult is the content type of a direct reply: the faster
// form of an invocation reply that funchost and a funcmcp worker use when
// both support it.
//
// funchost lists it in the Accept header of every invocation; a funcmcp
// worker that sees it there may answer a tool call with this content type and
// a [DirectReply] body instead of today's custom-handler reply
// ({"Outputs","Logs","ReturnValue"} with the result envelope as a string
// holding strings of JSON). The Azure Functions host never lists it, so it
// always gets today's reply. A resource read, a prompt or a completion is
// answered in the same way, {"Logs":[…],"Result":<the method's MCP result
// object>}: a ReadResourceResult, a GetPromptResult or a CompleteResult as
// MCP spells it.
const MediaTypeDirectResult = "application/vnd.funcmcp.result+json"

// DirectReply is the body of a direct reply: the worker's log lines, the
// whole tool result as JSON (not a string holding JSON), and the output
// check and issue of [ToolResult.Checked] and [ToolResult.OutputIssue]. The
// result carries no text copy of its structuredContent: the host adds it
// ([AddTextCopy]) as it shapes the result.
type DirectReply struct {
	Logs        []string        `json:"Logs"`
	Result      *CallToolResult `json:"Result"`
	Checked     string          `json:"Checked,omitempty"`
	OutputIssue string          `json:"OutputIssue,omitempty"`
}

// AcceptsDirectResult reports whether an Accept header value lists
// [MediaTypeDirectResult].
func AcceptsDirectResult(accept string) bool {
	for accept != "" {
		var part string
		part, accept, _ = strings.Cut(accept, ",")
		mt, _, _ := strings.Cut(part, ";")
		if strings.EqualFold(strings.TrimSpace(mt), MediaTypeDirectResult) {
			return true
		}
	}
	return false
}

// IsDirectResult reports whether a Content-Type header value is
// [MediaTypeDirectResult].
func IsDirectResult(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == MediaTypeDirectResult
}

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s as a JSON string exactly as [Marshal] encodes
// it: no HTML escaping; quote, backslash and control characters escaped
// (\b, \f, \n, \r and \t in their short forms); invalid UTF-8 replaced by
// U+FFFD; U+2028 and U+2029 escaped.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
