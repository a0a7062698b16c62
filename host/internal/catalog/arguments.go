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
	switch {
	case depth > lim.ArgumentDepth:
		return invalidArgs(fmt.Sprintf("the arguments nest deeper than %d levels", lim.ArgumentDepth))
	case keys > lim.ArgumentKeys:
		return invalidArgs(fmt.Sprintf("the arguments hold more than %d object keys", lim.ArgumentKeys))
	}
	return nil
}

func invalidArgs(reason string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: " + reason + "."}
}
