package catalog

import (
	"encoding/json"
	"fmt"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/internal/jsonx"
)

// CheckArguments refuses arguments larger, deeper or with more object keys
// than the limits, before anything else is done with them: a
// *jsonrpc.Error -32602.
func (c *Catalog) CheckArguments(args map[string]json.RawMessage) error {
	lim := &c.lim
	size, keys, depth := 0, len(args), 1
	for _, raw := range args {
		size += len(raw)
		if size > lim.ArgumentBytes {
			return invalidArgs(fmt.Sprintf("the arguments exceed %d bytes", lim.ArgumentBytes))
		}
		d, k := jsonx.Measure(raw)
		depth = max(depth, d+1)
		keys += k
	}
	return c.checkShape(depth, keys)
}

// CheckRawArguments is CheckArguments for an arguments object as the
// client sent it (a prompt's arguments, completion's context.arguments, a
// call's arguments before they are decoded): it reads the text once,
// without decoding it, and refuses it when its size passes the byte limit
// (the text as sent, which holds the values and their names), it nests
// too deep or holds too many object keys. Absent or null arguments pass.
func (c *Catalog) CheckRawArguments(raw json.RawMessage) error {
	if jsonx.IsAbsent(raw) {
		return nil
	}
	if len(raw) > c.lim.ArgumentBytes {
		return invalidArgs(fmt.Sprintf("the arguments exceed %d bytes", c.lim.ArgumentBytes))
	}
	depth, keys := jsonx.Measure(raw)
	return c.checkShape(depth, keys)
}

func (c *Catalog) checkShape(depth, keys int) error {
	switch {
	case depth > c.lim.ArgumentDepth:
		return invalidArgs(fmt.Sprintf("the arguments nest deeper than %d levels", c.lim.ArgumentDepth))
	case keys > c.lim.ArgumentKeys:
		return invalidArgs(fmt.Sprintf("the arguments hold more than %d object keys", c.lim.ArgumentKeys))
	}
	return nil
}

func invalidArgs(reason string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: " + reason + "."}
}
