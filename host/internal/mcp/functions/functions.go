package functions

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// DefaultPageSize is how many entries one page of resources/list,
// resources/templates/list or prompts/list holds when [Options] leaves it 0.
const DefaultPageSize = 100

// Functions is what the endpoint serves besides tools: resources, resource
// templates, prompts and completions ([Server.Functions]). When given, these
// methods are served and their capabilities advertised (each only when the
// app has such functions); otherwise they answer method-not-found. Every
// field is required.
type Functions struct {
	// Lists are the list entries, each encoded once; the handler never
	// modifies them.
	Lists *FunctionLists
	// ReadResource, GetPrompt and Complete run one request. A
	// *ProtocolError becomes that JSON-RPC error; any other error -32603.
	ReadResource func(ctx context.Context, req *ReadRequest) (Result[metadata.ReadResourceResult], error)
	GetPrompt    func(ctx context.Context, req *PromptRequest) (Result[metadata.GetPromptResult], error)
	Complete     func(ctx context.Context, req *CompleteRequest) (Result[metadata.CompleteResult], error)
}

// Advertises reports whether the app serves what capability name
// (metadata.CapabilityResources, CapabilityPrompts, CapabilityCompletions)
// advertises; false for a nil f and for any other name.
func (f *Functions) Advertises(name string) bool {
	if f == nil {
		return false
	}
	l := f.Lists
	switch name {
	case metadata.CapabilityResources:
		return len(l.Resources) > 0 || len(l.Templates) > 0
	case metadata.CapabilityPrompts:
		return len(l.Prompts) > 0
	case metadata.CapabilityCompletions:
		return l.Completions
	}
	return false
}

// Result is the result of a resource read, a prompt or a completion:
// either Value, which the handler encodes, or Encoded, the result object as
// the function's worker encoded it (see [EncodedResult]), which the handler
// splices into its reply as it is. Neither set is no result (-32603).
type Result[T any] struct {
	Value   *T
	Encoded *Encoded
}

// Encoded is a result object encoded once, by the function's worker, and
// checked once by [EncodedResult].
type Encoded struct {
	Members []byte          // the object's members without its braces and _meta
	Meta    json.RawMessage // its _meta, nil when it has none
}

// EncodedResult checks obj, a result object a function's worker encoded,
// in one pass: one JSON object in valid UTF-8 whose member need is an array
// or an object, _meta (when present, once) an object. Its _meta is taken out
// so that the reply can add the server's own to it (2026-07-28).
func EncodedResult(obj []byte, need string) (*Encoded, error) {
	if !utf8.Valid(obj) {
		return nil, errors.New("the result is not valid UTF-8")
	}
	s := jsonx.NewScanner(obj)
	s.Space()
	if s.Peek() != '{' {
		return nil, errors.New("the result is not a JSON object")
	}
	start := s.Pos()
	var (
		meta              []byte
		metaFrom, metaTo  int // the _meta member's span, from its key to its value's end
		keyFrom           int
		found, metaRepeat bool
	)
	_, ok := s.Object(func(key []byte, escaped bool) bool {
		keyFrom = cap(obj) - cap(key) - 1 // key is a slice of obj: back to its quote
		name := string(key)
		if escaped {
			name, _ = jsonx.Unescape(key)
		}
		val, ok := s.Value()
		if !ok {
			return false
		}
		switch name {
		case need:
			found = val[0] == '[' || val[0] == '{'
		case "_meta":
			metaRepeat = meta != nil
			meta, metaFrom, metaTo = val, keyFrom, s.Pos()
		}
		return true
	})
	end := s.Pos()
	switch {
	case !ok || !s.End():
		return nil, errors.New("the result is not one JSON object")
	case !found:
		return nil, fmt.Errorf("the result has no %q", need)
	case metaRepeat:
		return nil, errors.New("the result has _meta twice")
	case meta != nil && meta[0] == 'n':
		meta = nil
	case meta != nil && meta[0] != '{':
		return nil, errors.New("the result's _meta is not an object")
	}
	members := bytes.TrimSpace(obj[start+1 : end-1])
	if metaTo > 0 {
		// Cut the _meta member and a comma next to it.
		before := bytes.TrimSpace(obj[start+1 : metaFrom])
		after := bytes.TrimSpace(obj[metaTo : end-1])
		if len(after) > 0 && after[0] == ',' {
			after = after[1:]
		} else {
			before = bytes.TrimSuffix(before, []byte(","))
		}
		members = append(bytes.Clone(before), after...)
	}
	if bytes.ContainsAny(members, "\r\n") || bytes.ContainsAny(meta, "\r\n") {
		// Line breaks are white space here (a string holds none): an SSE
		// data line cannot carry them.
		var b bytes.Buffer
		if err := json.Compact(&b, append(append([]byte{'{'}, members...), '}')); err != nil {
			return nil, fmt.Errorf("compacting the result: %w", err)
		}
		members = b.Bytes()[1 : b.Len()-1]
		if meta != nil {
			b = bytes.Buffer{}
			_ = json.Compact(&b, meta) // checked above
			meta = b.Bytes()
		}
	}
	return &Encoded{Members: members, Meta: meta}, nil
}

// FunctionLists are the entries of the list methods, in listing order: each
// a compact JSON object (binding.Resource.ListEntry, binding.Prompt.ListEntry).
type FunctionLists struct {
	Resources []json.RawMessage // static resources (resources/list)
	Templates []json.RawMessage // resource templates (resources/templates/list)
	Prompts   []json.RawMessage // prompts (prompts/list)
	// Completions says whether completion/complete is served (the app has
	// prompts or templates).
	Completions bool
}

// Caller is what the handler knows of the client of a request.
type Caller struct {
	ProtocolVersion string               // the request's revision
	SessionID       string               // the Mcp-Session-Id ("" for none, always for modern requests)
	ClientInfo      *metadata.ClientInfo // nil when unknown
	Meta            *wire.RequestMeta    // the _meta of a modern request, nil for a legacy one
	Headers         http.Header          // the request headers
	Transport       string               // metadata.TransportStreamableHTTP or metadata.TransportSSE
}

// ReadRequest is one resources/read.
type ReadRequest struct {
	Caller
	URI string
}

// PromptRequest is one prompts/get.
type PromptRequest struct {
	Caller
	Name      string
	Arguments map[string]json.RawMessage // nil when absent
	// Notify sends the prompt function's notifications and requests to the
	// client; nil when the client can receive none (see [Notifier]).
	Notify *clientreq.Notifier
}

// CompleteRequest is one completion/complete.
type CompleteRequest struct {
	Caller
	Ref       metadata.CompletionRef
	Argument  metadata.CompletionArgument
	Arguments map[string]string // context.arguments: the arguments given so far
}

// ResourceNotFound is the error for a resources/read of a URI nothing
// serves: -32002 before 2026-07-28, -32602 from it (SEP-2164), with the URI
// in data either way.
func ResourceNotFound(version, uri string) *jsonrpc.Error {
	code := metadata.CodeResourceNotFound
	if metadata.IsStateless(version) {
		code = jsonrpc.CodeInvalidParams
	}
	return &jsonrpc.Error{Code: code, Message: "Resource not found", Data: map[string]string{"uri": uri}}
}

// ErrNoResult is the error of a function that returned neither a value
// nor an encoded result (answered with -32603).
var ErrNoResult = errors.New("the function returned no result")

// valueOf is what a [Call]'s function returns for a function's result.
func valueOf[T any](r Result[T], err error) (any, json.RawMessage, error) {
	switch {
	case err != nil:
		return nil, nil, err
	case r.Encoded != nil:
		return r.Encoded, nil, nil
	case r.Value != nil:
		return r.Value, nil, nil
	}
	return nil, nil, ErrNoResult
}

// cursorPrefix marks the cursors this handler makes.
const cursorPrefix = "page:"

func makeCursor(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + strconv.Itoa(offset)))
}

func parseCursor(c string) (int, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !bytes.HasPrefix(raw, []byte(cursorPrefix)) {
		return 0, false
	}
	n, err := strconv.Atoi(string(raw[len(cursorPrefix):]))
	return n, err == nil && n >= 0
}

// objectMembers reads a JSON object's members (names matched exactly, as
// every member of a message is; a repeated name was refused by the
// decoder); nil for an absent or null value, ok false for anything but an
// object. The values are copies.
func objectMembers(raw []byte) (map[string]json.RawMessage, bool) {
	if len(raw) == 0 || raw[0] == 'n' {
		return nil, true
	}
	if raw[0] != '{' {
		return nil, false
	}
	out := map[string]json.RawMessage{}
	it := wire.Members(raw)
	for key, val, ok := it.Next(); ok; key, val, ok = it.Next() {
		k, _ := wire.StringValue(key)
		out[k] = bytes.Clone(val)
	}
	return out, true
}

// stringMembers reads the members of an object of strings.
func stringMembers(raw []byte) (map[string]string, bool) {
	obj, ok := objectMembers(raw)
	if !ok {
		return nil, false
	}
	var out map[string]string
	for k, v := range obj {
		s, ok := wire.StringValue(v)
		if !ok {
			return nil, false
		}
		if out == nil {
			out = make(map[string]string, len(obj))
		}
		out[k] = s
	}
	return out, true
}

// decodeCompleteParams reads completion/complete's params with exact member
// names; problem is the -32602 message.
func decodeCompleteParams(params []byte) (*CompleteRequest, string) {
	const need = "Invalid params: completion/complete needs ref {type, name or uri} and argument {name, value}, each a string."
	ref, argument := wire.Member(params, "ref"), wire.Member(params, "argument")
	if len(ref) == 0 || ref[0] != '{' || len(argument) == 0 || argument[0] != '{' {
		return nil, need
	}
	cr := &CompleteRequest{}
	for _, f := range []struct {
		obj  []byte
		name string
		dst  *string
		req  bool
	}{
		{ref, "type", &cr.Ref.Type, true},
		{ref, "name", &cr.Ref.Name, false},
		{ref, "uri", &cr.Ref.URI, false},
		{argument, "name", &cr.Argument.Name, true},
		{argument, "value", &cr.Argument.Value, true},
	} {
		raw := wire.Member(f.obj, f.name)
		if raw == nil || raw[0] == 'n' {
			if f.req {
				return nil, need
			}
			continue
		}
		s, ok := wire.StringValue(raw)
		if !ok {
			return nil, need
		}
		*f.dst = s
	}
	if ctx := wire.Member(params, "context"); len(ctx) > 0 && ctx[0] == '{' {
		args, ok := stringMembers(wire.Member(ctx, "arguments"))
		if !ok {
			return nil, "Invalid params: context.arguments must be an object of strings."
		}
		cr.Arguments = args
	}
	return cr, ""
}
