package metadata

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/funcmcp/funcmcp/internal/jsonx"
)

// AppendJSON appends the context as [Marshal] encodes it (keys of maps in
// sorted order, raw arguments compacted), without reflection: funchost
// encodes one for every call. An argument that is not valid JSON is an
// error, as with Marshal.
func (c *ToolInvocationContext) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"name":`...)
	dst = AppendJSONString(dst, c.Name)
	if len(c.Arguments) > 0 {
		dst = append(dst, `,"arguments":`...)
		var err error
		if dst, err = AppendArguments(dst, c.Arguments); err != nil {
			return nil, err
		}
	}
	if c.SessionID != "" {
		dst = append(dst, `,"sessionid":`...)
		dst = AppendJSONString(dst, c.SessionID)
	}
	if ci := c.ClientInfo; ci != nil {
		dst = append(dst, `,"clientinfo":{"name":`...)
		dst = AppendJSONString(dst, ci.Name)
		if ci.Title != "" {
			dst = append(dst, `,"title":`...)
			dst = AppendJSONString(dst, ci.Title)
		}
		dst = append(dst, `,"version":`...)
		dst = AppendJSONString(dst, ci.Version)
		dst = append(dst, '}')
	}
	if t := c.Transport; t != nil {
		dst = append(dst, `,"transport":{"name":`...)
		dst = AppendJSONString(dst, t.Name)
		if t.SessionID != "" {
			dst = append(dst, `,"sessionId":`...)
			dst = AppendJSONString(dst, t.SessionID)
		}
		if p := t.Properties; p != nil {
			dst = append(dst, `,"properties":{`...)
			if !p.Headers.IsZero() {
				dst = append(dst, `"headers":`...)
				dst = p.Headers.appendJSON(dst)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, '}')
	}
	return append(dst, '}'), nil
}

// AppendArguments appends args as the "arguments" object of a context
// [ToolInvocationContext.AppendJSON] writes: keys in sorted order, values
// compacted, an absent value as null. An argument that is not valid JSON
// is an error, as with Marshal.
func AppendArguments(dst []byte, args map[string]json.RawMessage) ([]byte, error) {
	dst = append(dst, '{')
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendJSONString(dst, k)
		dst = append(dst, ':')
		v := args[k]
		if len(v) == 0 {
			dst = append(dst, "null"...)
			continue
		}
		var err error
		if dst, err = jsonx.AppendCompact(dst, v); err != nil {
			return nil, fmt.Errorf("encoding argument %q: %w", k, err)
		}
	}
	return append(dst, '}'), nil
}
