package metadata

import (
	"encoding/json"

	"github.com/funcmcp/funcmcp/internal/jsonx"
)

// scanToolContext reads a tool invocation context spelled as funchost and
// the Functions host spell it, in one pass of the module's scanner: an
// object whose members are among name, arguments, sessionid, clientinfo and
// transport (exactly so, each once), of the kinds they hold (strings,
// objects; no nulls), clientinfo with name, title and version, transport
// with name, sessionId and properties.headers. ok is false for anything
// else, which encoding/json decodes: the result is the same. data is
// owned: what is returned holds slices of it.
func scanToolContext(data []byte) (*ToolInvocationContext, bool) {
	sc := jsonx.NewScanner(data)
	sc.Space()
	c := &ToolInvocationContext{}
	var seen uint8
	once := func(bit uint8) bool {
		if seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	}
	_, ok := sc.Object(func(key []byte, escaped bool) bool {
		if escaped {
			return false
		}
		switch string(key) {
		case "name":
			s, ok := scanString(&sc)
			c.Name = s
			return ok && once(1)
		case "arguments":
			start := sc.Pos()
			args, ok := scanArguments(&sc)
			c.Arguments, c.RawArguments = args, data[start:sc.Pos()]
			return ok && once(2)
		case "sessionid":
			s, ok := scanString(&sc)
			c.SessionID = s
			return ok && once(4)
		case "clientinfo":
			ci, ok := scanClientInfo(&sc)
			c.ClientInfo = ci
			return ok && once(8)
		case "transport":
			t, ok := scanTransport(&sc)
			c.Transport = t
			return ok && once(16)
		}
		return false
	})
	if !ok || !sc.End() {
		return nil, false
	}
	return c, true
}

// ScanArguments returns the members of raw, an arguments object, as a
// decoded context holds them (see [DecodeToolInvocationContext]): each
// value a slice of raw. ok is false when raw is not one JSON object.
func ScanArguments(raw []byte) (args map[string]json.RawMessage, ok bool) {
	sc := jsonx.NewScanner(raw)
	sc.Space()
	if args, ok = scanArguments(&sc); !ok || !sc.End() {
		return nil, false
	}
	return args, true
}

// scanArguments reads an arguments object.
func scanArguments(sc *jsonx.Scanner) (map[string]json.RawMessage, bool) {
	args := map[string]json.RawMessage{}
	_, ok := sc.Object(func(key []byte, escaped bool) bool {
		k, ok := jsonx.Text(key, escaped)
		if !ok {
			return false
		}
		v, ok := sc.Value()
		args[k] = v
		return ok
	})
	return args, ok
}

// scanString reads a string value, as encoding/json decodes it.
func scanString(sc *jsonx.Scanner) (string, bool) {
	v, ok := sc.Value()
	if !ok || len(v) == 0 || v[0] != '"' {
		return "", false
	}
	return jsonx.StringValue(v)
}

func scanClientInfo(sc *jsonx.Scanner) (*ClientInfo, bool) {
	ci := &ClientInfo{}
	var seen uint8
	_, ok := sc.Object(func(key []byte, escaped bool) bool {
		var dst *string
		var bit uint8
		switch string(key) {
		case "name":
			dst, bit = &ci.Name, 1
		case "title":
			dst, bit = &ci.Title, 2
		case "version":
			dst, bit = &ci.Version, 4
		}
		if escaped || dst == nil || seen&bit != 0 {
			return false
		}
		seen |= bit
		var ok bool
		*dst, ok = scanString(sc)
		return ok
	})
	return ci, ok
}

func scanTransport(sc *jsonx.Scanner) (*Transport, bool) {
	t := &Transport{}
	var seen uint8
	_, ok := sc.Object(func(key []byte, escaped bool) bool {
		if escaped {
			return false
		}
		var ok bool
		switch string(key) {
		case "name":
			t.Name, ok = scanString(sc)
			return ok && seen&1 == 0 && set(&seen, 1)
		case "sessionId":
			t.SessionID, ok = scanString(sc)
			return ok && seen&2 == 0 && set(&seen, 2)
		case "properties":
			if seen&4 != 0 {
				return false
			}
			seen |= 4
			p := &TransportProperties{}
			t.Properties = p
			var headers bool
			_, ok = sc.Object(func(key []byte, escaped bool) bool {
				if escaped || string(key) != "headers" || headers {
					return false
				}
				headers = true
				start := sc.Pos()
				n, ok := scanHeaderObject(sc)
				p.Headers = Headers{&headerSet{raw: sc.Data()[start:sc.Pos()], empty: n == 0}}
				return ok
			})
			return ok
		}
		return false
	})
	return t, ok
}

func set(seen *uint8, bit uint8) bool {
	*seen |= bit
	return true
}

// scanHeaderObject reads an object of strings and nulls (what
// map[string]string decodes), returning its number of members.
func scanHeaderObject(sc *jsonx.Scanner) (int, bool) {
	if sc.Peek() != '{' {
		return 0, false
	}
	return sc.Object(func([]byte, bool) bool {
		if sc.Peek() == '"' {
			_, _, ok := sc.String()
			return ok
		}
		return sc.Literal("null")
	})
}
