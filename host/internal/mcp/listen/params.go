package listen

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/host/internal/notify"
)

// listenParams is what a subscriptions/listen asks for.
type listenParams struct {
	tools, prompts, resources *bool // nil when not asked
	uris                      []string
	hasURIs                   bool
	taskIDs                   []string
	hasTasks                  bool
}

// readParams reads params.notifications; problem is the -32602
// message.
func readParams(params []byte) (p listenParams, problem string) {
	n := wire.Member(params, "notifications")
	if n == nil || n[0] != '{' {
		return p, "Invalid params: notifications must be an object."
	}
	it := wire.Members(n)
	for key, val, ok := it.Next(); ok; key, val, ok = it.Next() {
		var dst **bool
		switch {
		case wire.KeyIs(key, "toolsListChanged"):
			dst = &p.tools
		case wire.KeyIs(key, "promptsListChanged"):
			dst = &p.prompts
		case wire.KeyIs(key, "resourcesListChanged"):
			dst = &p.resources
		case wire.KeyIs(key, "resourceSubscriptions"), wire.KeyIs(key, "taskIds"):
			list, ok := stringList(val)
			if !ok {
				return p, "Invalid params: notifications." + string(bytes.Trim(key, `"`)) + " must be an array of non-empty strings of at most " +
					strconv.Itoa(notify.MaxURI) + " bytes."
			}
			if wire.KeyIs(key, "taskIds") {
				p.taskIDs, p.hasTasks = list, true
			} else {
				p.uris, p.hasURIs = list, true
			}
			continue
		default:
			continue // a notification type this server does not know: not honoured
		}
		switch val[0] {
		case 't', 'f':
			v := val[0] == 't'
			*dst = &v
		case 'n':
		default:
			return p, "Invalid params: notifications." + string(bytes.Trim(key, `"`)) + " must be a boolean."
		}
	}
	return p, ""
}

// stringList reads a JSON array of strings (each 1 to notify.MaxURI
// bytes), without duplicates; null reads as none.
func stringList(val []byte) ([]string, bool) {
	if val[0] == 'n' {
		return nil, true
	}
	var list []string
	if val[0] != '[' || json.Unmarshal(val, &list) != nil {
		return nil, false
	}
	seen := make(map[string]bool, len(list))
	out := list[:0]
	for _, s := range list {
		if s == "" || len(s) > notify.MaxURI {
			return nil, false
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out, true
}
