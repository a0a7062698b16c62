package ratelimit

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
)

// CodeRateLimited is the JSON-RPC error code of a refusal (a server
// error of the implementation-defined range).
const CodeRateLimited = -32000

// LimitData is the data of the JSON-RPC error of a refusal.
type LimitData struct {
	// Limit is which limit refused: "owner", "tool" or "server".
	Limit Scope `json:"limit"`
	// Setting is the setting that sets it; "" for "server".
	Setting string `json:"setting,omitempty"`
	// RetryAfterSeconds is Retry-After.
	RetryAfterSeconds int `json:"retryAfterSeconds"`
}

// Middleware returns the link of the MCP chain that applies l: nil when l
// is nil (no limit). An exchange already refused passes untouched.
func (l *Limiter) Middleware() []mcp.Middleware {
	if l == nil {
		return nil
	}
	return []mcp.Middleware{l.link}
}

func (l *Limiter) link(next mcp.MethodHandler) mcp.MethodHandler {
	return func(x *mcp.Exchange) {
		if x.Refused() {
			next(x)
			return
		}
		tool := ""
		if t := x.Target(); t.Kind == mcp.TargetTool {
			// The app's own name: a name the client made up makes no bucket.
			tool = t.Known
		}
		err := l.Allow(x.Owner(), tool)
		var le *LimitError
		if !errors.As(err, &le) {
			next(x)
			return
		}
		secs := le.RetryAfterSeconds()
		data := LimitData{Limit: le.Scope, RetryAfterSeconds: secs}
		switch le.Scope {
		case ScopeOwner:
			data.Setting = SettingPerOwner
		case ScopeTool:
			data.Setting = SettingPerTool
		}
		x.Refuse(http.StatusTooManyRequests, http.Header{"Retry-After": {strconv.Itoa(secs)}},
			CodeRateLimited, "Too Many Requests: "+le.Error()+"; retry after "+strconv.Itoa(secs)+" s.", data)
	}
}
