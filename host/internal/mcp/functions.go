package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/funcmcp/funcmcp/host/internal/mcp/functions"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// The request types and results of the resource, prompt and completion
// methods, and the readers of their params, are package functions'; these
// names keep the package's spelling.

// DefaultPageSize is how many entries one page of a list method holds when
// [Options] leaves it 0.
const DefaultPageSize = functions.DefaultPageSize

type (
	Functions       = functions.Functions
	Result[T any]   = functions.Result[T]
	Encoded         = functions.Encoded
	FunctionLists   = functions.FunctionLists
	Caller          = functions.Caller
	ReadRequest     = functions.ReadRequest
	PromptRequest   = functions.PromptRequest
	CompleteRequest = functions.CompleteRequest
)

// EncodedResult checks a result object a function's worker encoded (see
// [functions.EncodedResult]).
func EncodedResult(obj []byte, need string) (*Encoded, error) {
	return functions.EncodedResult(obj, need)
}

// ResourceNotFound is the error for a resources/read of a URI nothing
// serves (see [functions.ResourceNotFound]).
func ResourceNotFound(version, uri string) *ProtocolError {
	return functions.ResourceNotFound(version, uri)
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
		c.ClientInfo = req.session.Client
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
		return functions.ValueOf(res, err)
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
	args, ok := functions.ObjectMembers(rawArgs)
	if !ok {
		h.rpcError(req, CodeInvalidParams, "Invalid params: 'arguments' must be an object.", nil)
		return true
	}
	ident := callIdentity{method: methodPromptsGet, name: name, args: rawArgs, owner: req.Owner()}
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
			return functions.ValueOf(r, err)
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
	cr, problem := functions.DecodeCompleteParams(req.msg.Params)
	if problem != "" {
		h.rpcError(req, CodeInvalidParams, problem, nil)
		return true
	}
	cr.Caller = h.caller(req)
	h.runFunction(req, func(ctx context.Context) (any, json.RawMessage, error) {
		res, err := f.Complete(ctx, cr)
		return functions.ValueOf(res, err)
	}, cr.ProtocolVersion, req.method.Cacheable, nil, callIdentity{})
	return true
}

// runFunction runs one request whose context ends when the client cancels
// it, and answers with its result: an object encoded with metadata.Marshal
// (an [*Encoded] result as it is, with its own _meta),
// plus resultType, the cache hints (cacheable) and the server info for a
// modern revision. meta is the result's own _meta, left out of result. n
// is the request's Notifier (nil when it has none): a modern request that
// asked the client something is answered with its input-required result.
func (h *handler) runFunction(req *request, run func(ctx context.Context) (any, json.RawMessage, error), version string, cacheable bool, n *Notifier, ident callIdentity) {
	ctx, done := h.calls.Context(callParent(req), req.scope, req.id)
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
		h.result(req, h.wrapResult(enc.Members, enc.Meta, version, cacheable))
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
		n, ok := functions.ParseCursor(*p.Cursor)
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
		b.WriteString(strconv.Quote(functions.MakeCursor(end)))
	}
	h.result(req, h.wrapResult(b.Bytes(), nil, version, req.method.Cacheable))
}
