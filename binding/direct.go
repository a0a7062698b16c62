package binding

import (
	"encoding/json"
	"unicode/utf8"

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
	if r.Result == nil {
		return nil, r.Logs, resultErr("the direct reply has no Result")
	}
	if err := checkCallToolResult(r.Result, " of the direct reply"); err != nil {
		return nil, r.Logs, err
	}
	return &Decoded{Result: r.Result, Checked: r.Checked}, r.Logs, nil
}

// scanDirectReply reads a direct reply with its keys spelled as
// metadata.DirectReply spells them, checking the JSON as it goes; raw
// members are slices of data. ok is false for anything else (a key in
// another case, an unknown key, a repeated Result, a value of the wrong
// kind, bad JSON): encoding/json then decides.
func scanDirectReply(data []byte) (r metadata.DirectReply, ok bool) {
	s := fastScanner{data: data}
	s.ws()
	if s.i >= len(data) || data[s.i] != '{' {
		return r, false
	}
	sawResult := false
	_, ok = s.members('}', func() bool {
		key, ok := s.memberKey()
		if !ok {
			return false
		}
		switch string(key) {
		case "Logs":
			r.Logs = nil
			if s.null() {
				return true
			}
			if s.i >= len(data) || data[s.i] != '[' {
				return false
			}
			r.Logs = []string{}
			_, ok := s.members(']', func() bool {
				l, ok := s.stringValue()
				r.Logs = append(r.Logs, l)
				return ok
			})
			return ok
		case "Result":
			if sawResult {
				return false
			}
			sawResult = true
			if s.null() {
				return true
			}
			res, ok := s.callToolResult()
			r.Result = res
			return ok
		case "Checked":
			r.Checked = ""
			if s.null() {
				return true
			}
			var ok bool
			r.Checked, ok = s.stringValue()
			return ok
		}
		return false
	})
	s.ws()
	return r, ok && s.i == len(data)
}

// callToolResult reads a CallToolResult object spelled as metadata does.
func (s *fastScanner) callToolResult() (*metadata.CallToolResult, bool) {
	if s.i >= len(s.data) || s.data[s.i] != '{' {
		return nil, false
	}
	res := &metadata.CallToolResult{}
	_, ok := s.members('}', func() bool {
		key, ok := s.memberKey()
		if !ok {
			return false
		}
		switch string(key) {
		case "content":
			res.Content = nil
			if s.null() {
				return true
			}
			if s.i >= len(s.data) || s.data[s.i] != '[' {
				return false
			}
			res.Content = []json.RawMessage{}
			_, ok := s.members(']', func() bool {
				raw, ok := s.raw()
				res.Content = append(res.Content, raw)
				return ok
			})
			return ok
		case "structuredContent":
			res.StructuredContent, ok = s.raw()
			return ok
		case "_meta":
			res.Meta, ok = s.raw()
			return ok
		case "isError":
			switch {
			case s.null():
				return true
			case s.literal("true"):
				res.IsError = true
				return true
			case s.literal("false"):
				res.IsError = false
				return true
			}
		}
		return false
	})
	return res, ok
}

// memberKey reads an object key and the colon after it.
func (s *fastScanner) memberKey() ([]byte, bool) {
	key, ok := s.key()
	if !ok {
		return nil, false
	}
	s.ws()
	if s.i >= len(s.data) || s.data[s.i] != ':' {
		return nil, false
	}
	s.i++
	s.ws()
	return key, true
}

// raw reads any JSON value and returns its text.
func (s *fastScanner) raw() (json.RawMessage, bool) {
	start := s.i
	if !s.value(nil, 0) {
		return nil, false
	}
	return s.data[start:s.i], true
}

// null reads a JSON null, if that is what comes next.
func (s *fastScanner) null() bool { return s.literal("null") }

func (s *fastScanner) literal(lit string) bool {
	if len(s.data)-s.i >= len(lit) && string(s.data[s.i:s.i+len(lit)]) == lit {
		s.i += len(lit)
		return true
	}
	return false
}

// stringValue reads a JSON string and returns its text, decoded as
// encoding/json decodes it.
func (s *fastScanner) stringValue() (string, bool) {
	start := s.i
	raw, escaped, ok := s.strRaw()
	if !ok {
		return "", false
	}
	if !escaped && utf8.Valid(raw) {
		return string(raw), true
	}
	var v string
	return v, json.Unmarshal(s.data[start:s.i], &v) == nil
}

// blockCertainlyValid reports whether a content block is valid for
// [CheckContentBlock] without decoding it: valid JSON, an object with one
// "type" that is text, image, audio or resource_link, and the string fields
// that kind needs. false means "ask CheckContentBlock".
func blockCertainlyValid(block []byte) bool {
	const (
		fText = 1 << iota
		fData
		fMimeType
		fURI
		fName
	)
	s := fastScanner{data: block}
	s.ws()
	if s.i >= len(block) || block[s.i] != '{' {
		return false
	}
	var typ []byte
	var have int
	_, ok := s.members('}', func() bool {
		key, ok := s.memberKey()
		if !ok {
			return false
		}
		var bit int
		switch string(key) {
		case "type":
			if typ != nil {
				return false // the last one counts: let the full check decide
			}
			raw, escaped, ok := s.strRaw()
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
		default:
			return s.value(nil, 0)
		}
		if s.i >= len(block) || block[s.i] != '"' {
			return false
		}
		have |= bit
		_, _, ok = s.strRaw()
		return ok
	})
	s.ws()
	if !ok || s.i != len(block) {
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
	default:
		return false
	}
	return have&need == need
}
