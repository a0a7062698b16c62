package host

import (
	"encoding/json"
	"fmt"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
)

// Defaults of the bounds in [Options].
const (
	DefaultMaxCallsInFlight = 256
	DefaultMaxConnections   = 1024
	DefaultMaxArgumentBytes = 1 << 20
	DefaultMaxArgumentDepth = 64
	DefaultMaxArgumentKeys  = 10000
)

// limits are the per-call bounds.
type limits struct {
	argBytes, argDepth, argKeys int
}

func newLimits(o *Options) *limits {
	return &limits{
		argBytes: o.MaxArgumentBytes,
		argDepth: o.MaxArgumentDepth,
		argKeys:  o.MaxArgumentKeys,
	}
}

// checkArguments refuses arguments larger, deeper or with more object keys
// than the limits, before anything else is done with them.
func (l *limits) checkArguments(args map[string]json.RawMessage) error {
	size, keys, depth := 0, len(args), 1
	for _, raw := range args {
		size += len(raw)
		if size > l.argBytes {
			return invalidArgs(fmt.Sprintf("the arguments exceed %d bytes", l.argBytes))
		}
		d, k := measureJSON(raw)
		depth = max(depth, d+1)
		keys += k
	}
	switch {
	case depth > l.argDepth:
		return invalidArgs(fmt.Sprintf("the arguments nest deeper than %d levels", l.argDepth))
	case keys > l.argKeys:
		return invalidArgs(fmt.Sprintf("the arguments hold more than %d object keys", l.argKeys))
	}
	return nil
}

func invalidArgs(reason string) error {
	return &mcp.ProtocolError{Code: mcp.CodeInvalidParams, Message: "Invalid params: " + reason + "."}
}

// measureJSON returns the nesting depth of a valid JSON text and the number
// of object keys in it, without decoding it.
func measureJSON(data []byte) (depth, keys int) {
	cur := 0
	inString, escaped := false, false
	for _, c := range data {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			cur++
			depth = max(depth, cur)
		case '}', ']':
			cur--
		case ':':
			keys++
		}
	}
	return depth, keys
}
