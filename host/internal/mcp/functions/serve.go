package functions

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strconv"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// Server answers resources/list, resources/templates/list, resources/read,
// prompts/list, prompts/get and completion/complete for the core: it reads
// their params, makes the pages of the lists, runs the functions and builds
// the result objects. The core keeps what needs the exchange: the
// request's cancellable context, the Notifier of prompts/get and its input
// answers, the input-required result, and writing the reply. Its fields are
// set once, before the first request.
type Server struct {
	// Functions are the app's; nil when it has none (no method is served).
	Functions *Functions
	// PageSize is how many entries one page of a list holds (> 0).
	PageSize int
	// Cache is what a modern cacheable result carries after resultType:
	// "ttlMs":…,"cacheScope":….
	Cache string
	// WithServerInfo returns a modern result's _meta with the server info
	// added.
	WithServerInfo func(meta json.RawMessage) json.RawMessage
	// CheckArguments bounds an arguments object as sent, before anything
	// decodes it: the error to answer with, nil when it passes.
	CheckArguments func(raw []byte) *jsonrpc.Error
	// Log records the failures answered with -32603.
	Log *slog.Logger
}

// Request is one request to a method of s, as the core read it.
type Request struct {
	Method string          // its method, as [metadata] spells it
	Params json.RawMessage // its params
	Caller Caller
	// Cacheable says the method's modern result carries the cache hints.
	Cacheable bool
}

// Call is a request whose params s read: either its answer, made at once
// (a page of a list), or a function for the core to run ([Call.Run]).
type Call struct {
	// Result is the answer of a list method; nil for a function to run.
	Result []byte
	// Prompt marks a prompts/get, whose function may talk to the client:
	// the core gives it a Notifier, and checks the input answers of a
	// modern request against Name and Arguments.
	Prompt    bool
	Name      string          // the prompt's name
	Arguments json.RawMessage // its arguments as sent, nil when absent

	s         *Server
	version   string
	cacheable bool
	run       func(ctx context.Context, n *clientreq.Notifier) (any, json.RawMessage, error)
}

// Outcome is what a [Call]'s function returned, for [Outcome.Answer].
type Outcome struct {
	c    *Call
	res  any             // a value to encode, or an [*Encoded]
	meta json.RawMessage // the result's own _meta, left out of res
	err  error
}

// Read reads a request's params. served is false when the endpoint does
// not serve the method after all (the app has no Functions, or nothing to
// complete): the request gets method-not-found. A *jsonrpc.Error is the
// answer to a request whose params are refused.
func (s *Server) Read(r *Request) (call *Call, served bool, err *jsonrpc.Error) {
	f := s.Functions
	if f == nil {
		return nil, false, nil
	}
	switch r.Method {
	case metadata.MethodResourcesList:
		return s.page(r, "resources", f.Lists.Resources)
	case metadata.MethodResourcesTemplatesList:
		return s.page(r, "resourceTemplates", f.Lists.Templates)
	case metadata.MethodPromptsList:
		return s.page(r, "prompts", f.Lists.Prompts)
	}
	c := r.Caller
	call = &Call{s: s, version: c.ProtocolVersion, cacheable: r.Cacheable}
	switch r.Method {
	case metadata.MethodResourcesRead:
		uri, ok := wire.StringValue(wire.Member(r.Params, "uri"))
		if !ok {
			return nil, true, invalidParams("Invalid params: missing required parameter 'uri'.")
		}
		call.run = func(ctx context.Context, _ *clientreq.Notifier) (any, json.RawMessage, error) {
			res, err := f.ReadResource(ctx, &ReadRequest{Caller: c, URI: uri})
			return valueOf(res, err)
		}

	case metadata.MethodPromptsGet:
		name, ok := wire.StringValue(wire.Member(r.Params, "name"))
		if !ok {
			return nil, true, invalidParams("Invalid params: missing required parameter 'name'.")
		}
		rawArgs := wire.Member(r.Params, "arguments")
		if pe := s.checkArguments(rawArgs); pe != nil {
			return nil, true, pe
		}
		args, ok := objectMembers(rawArgs)
		if !ok {
			return nil, true, invalidParams("Invalid params: 'arguments' must be an object.")
		}
		call.Prompt, call.Name, call.Arguments = true, name, rawArgs
		call.run = func(ctx context.Context, n *clientreq.Notifier) (any, json.RawMessage, error) {
			r, err := f.GetPrompt(ctx, &PromptRequest{Caller: c, Name: name, Arguments: args, Notify: n})
			if err != nil || r.Value == nil {
				return valueOf(r, err)
			}
			res := r.Value
			meta := res.Meta
			cp := *res
			cp.Meta = nil
			return &cp, meta, nil
		}

	case metadata.MethodComplete:
		if !f.Lists.Completions {
			return nil, false, nil
		}
		if pe := s.checkArguments(wire.Member(wire.Member(r.Params, "context"), "arguments")); pe != nil {
			return nil, true, pe
		}
		cr, problem := decodeCompleteParams(r.Params)
		if problem != "" {
			return nil, true, invalidParams(problem)
		}
		cr.Caller = c
		call.run = func(ctx context.Context, _ *clientreq.Notifier) (any, json.RawMessage, error) {
			res, err := f.Complete(ctx, cr)
			return valueOf(res, err)
		}

	default:
		return nil, false, nil
	}
	return call, true, nil
}

func (s *Server) checkArguments(raw []byte) *jsonrpc.Error {
	if s.CheckArguments == nil {
		return nil
	}
	return s.CheckArguments(raw)
}

func invalidParams(message string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: message}
}

// Run runs the call's function in ctx, which ends when the client cancels
// the request. n is the request's Notifier, nil when it has none (only a
// prompt's function is given one).
func (c *Call) Run(ctx context.Context, n *clientreq.Notifier) *Outcome {
	res, meta, err := c.run(ctx, n)
	return &Outcome{c: c, res: res, meta: meta, err: err}
}

// Answer is the reply to the call: its result object, encoded with
// metadata.Marshal (an [*Encoded] result as it is, with its own _meta),
// plus resultType, the cache hints (when the method is cacheable) and the
// server info for a modern revision; or the error the function returned
// (a *jsonrpc.Error as it is, any other -32603). The core asks for it only
// when no input-required result answers the call instead.
func (o *Outcome) Answer() ([]byte, *jsonrpc.Error) {
	s, c := o.c.s, o.c
	if o.err != nil {
		if pe, ok := errors.AsType[*jsonrpc.Error](o.err); ok {
			return nil, pe
		}
		s.Log.Error("mcp request failed", "error", o.err)
		return nil, internalError()
	}
	if enc, ok := o.res.(*Encoded); ok {
		return s.wrapResult(enc.Members, enc.Meta, c.version, c.cacheable), nil
	}
	body, err := metadata.Marshal(o.res)
	if err != nil || len(body) < 2 || body[0] != '{' {
		s.Log.Error("mcp request failed: encoding the result", "error", err)
		return nil, internalError()
	}
	return s.wrapResult(body[1:len(body)-1], o.meta, c.version, c.cacheable), nil
}

func internalError() *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
}

// wrapResult makes a result object from its members (without braces): for
// a modern revision with resultType first, the cache hints when cacheable,
// and _meta with the server info; for a legacy one with meta as _meta when
// there is one.
func (s *Server) wrapResult(members []byte, meta json.RawMessage, version string, cacheable bool) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	if metadata.IsStateless(version) {
		b.WriteString(`"resultType":"complete",`)
		if cacheable {
			b.WriteString(s.Cache)
			b.WriteByte(',')
		}
		meta = s.WithServerInfo(meta)
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

// page answers one page of a list method, whose result's member key holds
// the entries: the entries after the params' cursor, at most the page size,
// with nextCursor when more follow. A cursor is opaque to clients; one this
// server did not make is -32602.
func (s *Server) page(r *Request, key string, entries []json.RawMessage) (*Call, bool, *jsonrpc.Error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	_ = json.Unmarshal(r.Params, &p)
	start := 0
	if p.Cursor != nil {
		n, ok := parseCursor(*p.Cursor)
		if !ok || n > len(entries) {
			return nil, true, invalidParams("Invalid params: the cursor is not one this server gave.")
		}
		start = n
	}
	end := min(start+s.PageSize, len(entries))
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
	return &Call{Result: s.wrapResult(b.Bytes(), nil, r.Caller.ProtocolVersion, r.Cacheable)}, true, nil
}
