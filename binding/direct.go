package binding

import (
	"encoding/json"

	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// DecodeDirectReply turns a direct reply ([metadata.DirectReply], the body
// of a reply of type [metadata.MediaTypeDirectResult]) into a tool result,
// with the same checks as a "call_tool_result" envelope's content; the
// bytes of every block, of structuredContent and of _meta are kept as the
// worker wrote them. It also returns the worker's log lines. A reply as a
// funcmcp worker writes it is read in one pass over the text; any other
// spelling is decoded with encoding/json, to the same result. Errors are
// *ResultError.
func DecodeDirectReply(data []byte) (*Decoded, []string, error) {
	r, ok := scanDirectReply(data)
	if !ok {
		r = metadata.DirectReply{}
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, nil, resultErr("the direct reply is not valid: %v", err)
		}
	}
	d, err := DirectResult(&r)
	return d, r.Logs, err
}

// DirectResult checks the result of a direct reply as [DecodeDirectReply]
// checks one it decodes, and returns it: a worker in the host's process
// hands its reply over as it is ([metadata.LocalToolCaller]).
func DirectResult(r *metadata.DirectReply) (*Decoded, error) {
	if r.Result == nil {
		return nil, resultErr("the direct reply has no Result")
	}
	if err := checkCallToolResult(r.Result, " of the direct reply"); err != nil {
		return nil, err
	}
	return &Decoded{Result: r.Result, Checked: r.Checked, Issue: r.OutputIssue}, nil
}

// DecodeEncodedReply reads a direct reply to a resource read, a prompt or
// a completion: {"Logs":[…],"Result":<the method's MCP result object>}. It
// returns the Result's bytes as the worker wrote them (a JSON object; the
// caller checks its members) and the worker's log lines. Errors are
// *ResultError.
func DecodeEncodedReply(data []byte) (json.RawMessage, []string, error) {
	var r struct {
		Logs   []string        `json:"Logs"`
		Result json.RawMessage `json:"Result"`
	}
	ok := scanEncodedReply(data, &r.Logs, &r.Result)
	if !ok {
		r.Logs, r.Result = nil, nil
		if err := json.Unmarshal(data, &r); err != nil {
			return nil, nil, resultErr("the direct reply is not valid: %v", err)
		}
	}
	if len(r.Result) == 0 || r.Result[0] != '{' {
		return nil, r.Logs, resultErr("the direct reply's Result is not a JSON object")
	}
	return r.Result, r.Logs, nil
}

// scanEncodedReply reads what DecodeEncodedReply reads, spelled as a
// funcmcp worker spells it, in one pass; ok is false for anything else.
func scanEncodedReply(data []byte, logs *[]string, result *json.RawMessage) bool {
	s := jsonx.NewScanner(data)
	s.Space()
	if s.Peek() != '{' {
		return false
	}
	_, ok := s.Object(func(key []byte, escaped bool) bool {
		switch string(exactKey(key, escaped)) {
		case "Logs":
			if s.Literal("null") {
				*logs = nil
				return true
			}
			if s.Peek() != '[' {
				return false
			}
			*logs = []string{}
			_, ok := s.Array(func() bool {
				l, ok := stringValue(&s)
				*logs = append(*logs, l)
				return ok
			})
			return ok
		case "Result":
			if *result != nil || s.Peek() != '{' {
				return false
			}
			var ok bool
			*result, ok = s.Value()
			return ok
		}
		return false
	})
	return ok && s.End()
}

// scanDirectReply reads a direct reply with its keys spelled as
// metadata.DirectReply spells them, checking the JSON as it goes; raw
// members are slices of data. ok is false for anything else (a key in
// another case, an unknown key, a repeated Result, a value of the wrong
// kind, bad JSON): encoding/json then decides.
func scanDirectReply(data []byte) (r metadata.DirectReply, ok bool) {
	s := jsonx.NewScanner(data)
	s.Space()
	if s.Peek() != '{' {
		return r, false
	}
	sawResult := false
	_, ok = s.Object(func(key []byte, escaped bool) bool {
		switch string(exactKey(key, escaped)) {
		case "Logs":
			r.Logs = nil
			if s.Literal("null") {
				return true
			}
			if s.Peek() != '[' {
				return false
			}
			r.Logs = []string{}
			_, ok := s.Array(func() bool {
				l, ok := stringValue(&s)
				r.Logs = append(r.Logs, l)
				return ok
			})
			return ok
		case "Result":
			if sawResult {
				return false
			}
			sawResult = true
			if s.Literal("null") {
				return true
			}
			res, ok := callToolResult(&s)
			r.Result = res
			return ok
		case "Checked":
			var ok bool
			r.Checked, ok = nullableString(&s)
			return ok
		case "OutputIssue":
			var ok bool
			r.OutputIssue, ok = nullableString(&s)
			return ok
		}
		return false
	})
	return r, ok && s.End()
}

// exactKey is a key with its escapes decoded (nil when it does not
// decode), for comparing with a name spelled exactly.
func exactKey(key []byte, escaped bool) []byte {
	if !escaped {
		return key
	}
	k, ok := jsonx.Unescape(key)
	if !ok {
		return nil
	}
	return []byte(k)
}

// callToolResult reads a CallToolResult object spelled as metadata does.
func callToolResult(s *jsonx.Scanner) (*metadata.CallToolResult, bool) {
	if s.Peek() != '{' {
		return nil, false
	}
	res := &metadata.CallToolResult{}
	_, ok := s.Object(func(key []byte, escaped bool) bool {
		var ok bool
		switch string(exactKey(key, escaped)) {
		case "content":
			res.Content = nil
			if s.Literal("null") {
				return true
			}
			if s.Peek() != '[' {
				return false
			}
			res.Content = []json.RawMessage{}
			_, ok := s.Array(func() bool {
				raw, ok := s.Value()
				res.Content = append(res.Content, raw)
				return ok
			})
			return ok
		case "structuredContent":
			res.StructuredContent, ok = s.Value()
			return ok
		case "_meta":
			res.Meta, ok = s.Value()
			return ok
		case "isError":
			switch {
			case s.Literal("null"):
				return true
			case s.Literal("true"):
				res.IsError = true
				return true
			case s.Literal("false"):
				res.IsError = false
				return true
			}
		}
		return false
	})
	return res, ok
}

// nullableString reads a JSON string, or null as "", with stringValue's
// rules.
func nullableString(s *jsonx.Scanner) (string, bool) {
	if s.Literal("null") {
		return "", true
	}
	return stringValue(s)
}

// stringValue reads a JSON string and returns its text, decoded as
// encoding/json decodes it.
func stringValue(s *jsonx.Scanner) (string, bool) {
	raw, escaped, ok := s.String()
	if !ok {
		return "", false
	}
	return jsonx.Text(raw, escaped)
}

// blockCertainlyValid reports whether a content block is valid for
// [CheckContentBlock] without decoding it: valid JSON, an object with one
// "type" that is text, image, audio, resource_link or resource, and the
// string fields that kind needs (for resource, one "resource" object with
// one string "uri" and a "text" or a "blob"). false means "ask
// CheckContentBlock".
func blockCertainlyValid(block []byte) bool {
	const (
		fText = 1 << iota
		fData
		fMimeType
		fURI
		fName
		fResource
	)
	s := jsonx.NewScanner(block)
	s.Space()
	if s.Peek() != '{' {
		return false
	}
	var typ []byte
	var have int
	_, ok := s.Object(func(key []byte, escaped bool) bool {
		var bit int
		switch string(exactKey(key, escaped)) {
		case "type":
			if typ != nil {
				return false // the last one counts: let the full check decide
			}
			raw, escaped, ok := s.String()
			typ = raw
			return ok && !escaped
		case "text":
			bit = fText
		case "data":
			bit = fData
		case "mimeType":
			bit = fMimeType
		case "uri":
			bit = fURI
		case "name":
			bit = fName
		case "resource":
			if have&fResource != 0 || s.Peek() != '{' {
				return false
			}
			have |= fResource
			return embeddedCertainlyValid(&s)
		default:
			return s.Skip()
		}
		if s.Peek() != '"' {
			return false
		}
		have |= bit
		_, _, ok := s.String()
		return ok
	})
	if !ok || !s.End() {
		return false
	}
	var need int
	switch string(typ) {
	case metadata.ResultTypeText:
		need = fText
	case metadata.ResultTypeImage, metadata.ResultTypeAudio:
		need = fData | fMimeType
	case metadata.ResultTypeResourceLink:
		need = fURI | fName
	case metadata.ResultTypeResource:
		need = fResource
	default:
		return false
	}
	return have&need == need
}

// embeddedCertainlyValid reads the "resource" object of a resource block:
// ok only when it has one string "uri" and a "text" or a "blob".
func embeddedCertainlyValid(s *jsonx.Scanner) bool {
	var uri, content bool
	_, ok := s.Object(func(key []byte, escaped bool) bool {
		switch string(exactKey(key, escaped)) {
		case "uri":
			if uri || s.Peek() != '"' {
				return false
			}
			uri = true
			_, _, ok := s.String()
			return ok
		case "text", "blob":
			content = true
		}
		return s.Skip()
	})
	return ok && uri && content
}
