package mcp

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

	"github.com/funcmcp/funcmcp/host/internal/owner"
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
	members []byte          // the object's members without its braces and _meta
	meta    json.RawMessage // its _meta, nil when it has none
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
	return &Encoded{members: members, meta: meta}, nil
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
	Meta            *RequestMeta         // the _meta of a modern request, nil for a legacy one
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
	Notify *Notifier
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
func ResourceNotFound(version, uri string) *ProtocolError {
	code := metadata.CodeResourceNotFound
	if IsModern(version) {
		code = CodeInvalidParams
	}
	return &ProtocolError{Code: code, Message: "Resource not found", Data: map[string]string{"uri": uri}}
}

// functionCapability reports whether the app serves what capability name
// (resources, prompts, completions) advertises.
func functionCapability(f *Functions, name string) bool {
	if f == nil {
		return false
	}
	l := f.Lists
	switch name {
	case capResources:
		return len(l.Resources) > 0 || len(l.Templates) > 0
	case capPrompts:
		return len(l.Prompts) > 0
	case capCompletions:
		return l.Completions
	}
	return false
}

// caller is what the handler knows of the client of a request.
func (h *handler) caller(req *request) Caller {
	c := Caller{ProtocolVersion: req.version, Meta: req.meta, Headers: req.r.Header, Transport: req.Transport()}
	switch {
	case req.meta != nil:
		c.ClientInfo = req.meta.ClientInfo
	case req.session != nil:
		c.ClientInfo = req.session.client
	}
	if vals := req.r.Header[headerSessionID]; req.meta == nil && len(vals) > 0 && req.origin == nil {
		c.SessionID = vals[0]
	}
	return c
}

// serveResourcesList, serveTemplatesList and servePromptsList answer a page
// of a list; each reports false when the app has no Functions.
func (h *handler) serveResourcesList(req *request) bool {
	return h.servePage(req, "resources", func(l *FunctionLists) []json.RawMessage { return l.Resources })
}

func (h *handler) serveTemplatesList(req *request) bool {
	return h.servePage(req, "resourceTemplates", func(l *FunctionLists) []json.RawMessage { return l.Templates })
}

func (h *handler) servePromptsList(req *request) bool {
	return h.servePage(req, "prompts", func(l *FunctionLists) []json.RawMessage { return l.Prompts })
}

func (h *handler) servePage(req *request, key string, entries func(*FunctionLists) []json.RawMessage) bool {
	f := h.srv.Functions
	if f == nil {
		return false
	}
	h.listPage(req, req.version, req.msg.Params, key, entries(f.Lists))
	return true
}

// serveResourcesRead answers resources/read.
func (h *handler) serveResourcesRead(req *request) bool {
	f := h.srv.Functions
	if f == nil {
		return false
	}
	c := h.caller(req)
	uri, ok := stringValue(member(req.msg.Params, "uri"))
	if !ok {
		h.rpcError(req, CodeInvalidParams, "Invalid params: missing required parameter 'uri'.", nil)
		return true
	}
	h.runFunction(req, func(ctx context.Context) (any, json.RawMessage, error) {
		res, err := f.ReadResource(ctx, &ReadRequest{Caller: c, URI: uri})
		return valueOf(res, err)
	}, c.ProtocolVersion, req.method.Cacheable, nil, callIdentity{})
	return true
}

// servePromptsGet answers prompts/get.
func (h *handler) servePromptsGet(req *request) bool {
	f := h.srv.Functions
	if f == nil {
		return false
	}
	c := h.caller(req)
	params := req.msg.Params
	name, ok := stringValue(member(params, "name"))
	if !ok {
		h.rpcError(req, CodeInvalidParams, "Invalid params: missing required parameter 'name'.", nil)
		return true
	}
	rawArgs := member(params, "arguments")
	if pe := h.checkArguments(rawArgs); pe != nil {
		h.callError(req, pe, c.Meta != nil)
		return true
	}
	args, ok := objectMembers(rawArgs)
	if !ok {
		h.rpcError(req, CodeInvalidParams, "Invalid params: 'arguments' must be an object.", nil)
		return true
	}
	ident := callIdentity{method: methodPromptsGet, name: name, args: rawArgs, owner: owner.Of(req.r)}
	var in *inputState
	if c.Meta != nil {
		var (
			code    int
			problem string
		)
		if in, code, problem = h.readInput(req.r.Context(), params, ident); problem != "" {
			h.rpcError(req, code, problem, nil)
			return true
		}
	}
	n := h.notifier(req, &req.msg, c.Meta, req.session, in)
	h.runFunction(req, func(ctx context.Context) (any, json.RawMessage, error) {
		r, err := f.GetPrompt(ctx, &PromptRequest{Caller: c, Name: name, Arguments: args, Notify: n})
		if err != nil || r.Value == nil {
			return valueOf(r, err)
		}
		res := r.Value
		meta := res.Meta
		cp := *res
		cp.Meta = nil
		return &cp, meta, nil
	}, c.ProtocolVersion, req.method.Cacheable, n, ident)
	return true
}

// serveComplete answers completion/complete; it reports false when the app
// has nothing to complete.
func (h *handler) serveComplete(req *request) bool {
	f := h.srv.Functions
	if f == nil || !f.Lists.Completions {
		return false
	}
	if pe := h.checkArguments(member(member(req.msg.Params, "context"), "arguments")); pe != nil {
		h.callError(req, pe, req.meta != nil)
		return true
	}
	cr, problem := decodeCompleteParams(req.msg.Params)
	if problem != "" {
		h.rpcError(req, CodeInvalidParams, problem, nil)
		return true
	}
	cr.Caller = h.caller(req)
	h.runFunction(req, func(ctx context.Context) (any, json.RawMessage, error) {
		res, err := f.Complete(ctx, cr)
		return valueOf(res, err)
	}, cr.ProtocolVersion, req.method.Cacheable, nil, callIdentity{})
	return true
}

var errNoResult = errors.New("the function returned no result")

// valueOf is what runFunction's run returns for a function's result.
func valueOf[T any](r Result[T], err error) (any, json.RawMessage, error) {
	switch {
	case err != nil:
		return nil, nil, err
	case r.Encoded != nil:
		return r.Encoded, nil, nil
	case r.Value != nil:
		return r.Value, nil, nil
	}
	return nil, nil, errNoResult
}

func orNoResult(err error) error {
	if err == nil {
		return errNoResult
	}
	return err
}

// runFunction runs one request whose context ends when the client cancels
// it, and answers with its result: an object encoded with metadata.Marshal
// (an [*Encoded] result as it is, with its own _meta),
// plus resultType, the cache hints (cacheable) and the server info for a
// modern revision. meta is the result's own _meta, left out of result. n
// is the request's Notifier (nil when it has none): a modern request that
// asked the client something is answered with its input-required result.
func (h *handler) runFunction(req *request, run func(ctx context.Context) (any, json.RawMessage, error), version string, cacheable bool, n *Notifier, ident callIdentity) {
	ctx, done := h.cancellable(req)
	defer done()
	res, meta, err := run(ctx)
	req.w = n.End(req.w) // no notification after this: the reply follows
	if IsModern(version) && h.inputRequired(req, n, ident) {
		return
	}
	if err != nil {
		if pe, ok := errors.AsType[*ProtocolError](err); ok {
			h.callError(req, pe, IsModern(version))
			return
		}
		h.log.Error("mcp request failed", "error", err)
		h.rpcError(req, CodeInternalError, "Internal error", nil)
		return
	}
	if enc, ok := res.(*Encoded); ok {
		h.result(req, h.wrapResult(enc.members, enc.meta, version, cacheable))
		return
	}
	body, err := metadata.Marshal(res)
	if err != nil || len(body) < 2 || body[0] != '{' {
		h.log.Error("mcp request failed: encoding the result", "error", err)
		h.rpcError(req, CodeInternalError, "Internal error", nil)
		return
	}
	h.result(req, h.wrapResult(body[1:len(body)-1], meta, version, cacheable))
}

// wrapResult makes a result object from its members (without braces): for
// a modern revision with resultType first, the cache hints when cacheable,
// and _meta with the server info; for a legacy one with meta as _meta when
// there is one.
func (h *handler) wrapResult(members []byte, meta json.RawMessage, version string, cacheable bool) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	modern := IsModern(version)
	if modern {
		b.WriteString(`"resultType":"complete",`)
		if cacheable {
			b.WriteString(h.modernReplies.cache)
			b.WriteByte(',')
		}
		meta = h.modernReplies.withServerInfo(meta)
	}
	b.Write(members)
	if !jsonx.IsAbsent(meta) {
		if len(members) > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"_meta":`)
		b.Write(meta)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// listPage answers one page of a list method: the entries after the
// params' cursor, at most the page size, with nextCursor when more follow.
// A cursor is opaque to clients; one this handler did not make is -32602.
func (h *handler) listPage(req *request, version string, params json.RawMessage, key string, entries []json.RawMessage) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	_ = json.Unmarshal(params, &p)
	start := 0
	if p.Cursor != nil {
		n, ok := parseCursor(*p.Cursor)
		if !ok || n > len(entries) {
			h.rpcError(req, CodeInvalidParams, "Invalid params: the cursor is not one this server gave.", nil)
			return
		}
		start = n
	}
	end := min(start+h.pageSize, len(entries))
	var b bytes.Buffer
	b.WriteString(strconv.Quote(key))
	b.WriteString(":[")
	for i, e := range entries[start:end] {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e)
	}
	b.WriteByte(']')
	if end < len(entries) {
		b.WriteString(`,"nextCursor":`)
		b.WriteString(strconv.Quote(makeCursor(end)))
	}
	h.result(req, h.wrapResult(b.Bytes(), nil, version, req.method.Cacheable))
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
	it := members(raw)
	for key, val, ok := it.Next(); ok; key, val, ok = it.Next() {
		k, _ := stringValue(key)
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
		s, ok := stringValue(v)
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
	ref, argument := member(params, "ref"), member(params, "argument")
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
		raw := member(f.obj, f.name)
		if raw == nil || raw[0] == 'n' {
			if f.req {
				return nil, need
			}
			continue
		}
		s, ok := stringValue(raw)
		if !ok {
			return nil, need
		}
		*f.dst = s
	}
	if ctx := member(params, "context"); len(ctx) > 0 && ctx[0] == '{' {
		args, ok := stringMembers(member(ctx, "arguments"))
		if !ok {
			return nil, "Invalid params: context.arguments must be an object of strings."
		}
		cr.Arguments = args
	}
	return cr, ""
}
