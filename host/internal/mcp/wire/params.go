package wire

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// ParamHeader is a tool argument that clients mirror into an HTTP header on
// 2026-07-28 requests: a property of the input schema marked
// "x-mcp-header": "<Name>" (SEP-2243), sent as Mcp-Param-<Name>.
type ParamHeader struct {
	// Name is what follows "Mcp-Param-" in the header name.
	Name string
	// Path is the chain of property names from the arguments object to the
	// value.
	Path []string
}

// ParamHeadersOf finds the properties of a tool's input schema marked
// "x-mcp-header": "<Name>" (SEP-2243) that are statically reachable from
// the root through "properties" alone, in path order: what a
// [Server.ParamHeaders] returns for the tool.
func ParamHeadersOf(inputSchema json.RawMessage) []ParamHeader {
	var out []ParamHeader
	var walk func(schema json.RawMessage, path []string)
	walk = func(schema json.RawMessage, path []string) {
		var node struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Header     *string                    `json:"x-mcp-header"`
		}
		if json.Unmarshal(schema, &node) != nil {
			return
		}
		if node.Header != nil && *node.Header != "" && len(path) > 0 {
			out = append(out, ParamHeader{Name: *node.Header, Path: path})
		}
		for name, prop := range node.Properties {
			walk(prop, append(path[:len(path):len(path)], name))
		}
	}
	walk(inputSchema, nil)
	sort.Slice(out, func(i, j int) bool { return strings.Join(out[i].Path, "\x00") < strings.Join(out[j].Path, "\x00") })
	return out
}

const headerParamPrefix = "Mcp-Param-"

// CheckParamHeaders returns the -32020 message for the first declared
// argument whose header is missing or disagrees with the body, "" when all
// agree. params is the request's (valid) params object.
func CheckParamHeaders(hdr http.Header, params []byte, declared []ParamHeader) string {
	if len(declared) == 0 {
		return ""
	}
	var args []byte
	it := Members(params)
	for key, val, ok := it.Next(); ok; key, val, ok = it.Next() {
		if KeyIs(key, "arguments") {
			args = val
		}
	}
	for _, p := range declared {
		value := lookupPath(args, p.Path)
		if value == nil || value[0] == 'n' {
			continue // absent or null: the client sends no header
		}
		name := headerParamPrefix + p.Name
		raw := hdr.Get(name)
		if _, present := hdr[http.CanonicalHeaderKey(name)]; !present {
			return fmt.Sprintf("Header mismatch: the %s header is required: argument '%s' is in the body.", name, strings.Join(p.Path, "."))
		}
		got, ok := DecodeHeaderValue(raw)
		if !ok {
			return fmt.Sprintf("Header mismatch: the %s header value is not valid base64 in its =?base64?…?= form.", name)
		}
		if !sameParamValue(got, value) {
			return fmt.Sprintf("Header mismatch: %s header value '%s' does not match body value %s", name, got, value)
		}
	}
	return ""
}

// lookupPath returns the raw value at path in a JSON object (nil when
// absent).
func lookupPath(obj []byte, path []string) []byte {
	for _, name := range path {
		if len(obj) == 0 || obj[0] != '{' {
			return nil
		}
		var next []byte
		it := Members(obj)
		for key, val, ok := it.Next(); ok; key, val, ok = it.Next() {
			if KeyIs(key, name) {
				next = val // the last one wins, as in encoding/json
			}
		}
		obj = next
	}
	return obj
}

// sameParamValue compares a header value with the body value it mirrors:
// strings as they are, booleans as true/false, numbers numerically (42 and
// 42.0 agree).
func sameParamValue(header string, value []byte) bool {
	switch value[0] {
	case '"':
		s, ok := StringValue(value)
		return ok && s == header
	case 't', 'f':
		return header == string(value)
	case '{', '[':
		return false
	}
	want, err1 := strconv.ParseFloat(string(value), 64)
	got, err2 := strconv.ParseFloat(strings.TrimSpace(header), 64)
	return err1 == nil && err2 == nil && want == got
}

// strictBase64 decodes standard base64 with its padding, refusing anything
// else (SEP-2243 lists missing padding as invalid).
var StrictBase64 = base64.StdEncoding.Strict()

// DecodeHeaderValue decodes the =?base64?…?= form of a header value; any
// other value is taken as it is.
func DecodeHeaderValue(v string) (string, bool) {
	const prefix, suffix = "=?base64?", "?="
	if !strings.HasPrefix(v, prefix) || !strings.HasSuffix(v, suffix) || len(v) < len(prefix)+len(suffix) {
		return v, true
	}
	data, err := StrictBase64.DecodeString(v[len(prefix) : len(v)-len(suffix)])
	if err != nil {
		return "", false
	}
	return string(data), true
}
