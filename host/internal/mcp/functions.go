package mcp

import "github.com/funcmcp/funcmcp/host/internal/mcp/functions"

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

// callerOf is what the handler knows of the client of a request.
func callerOf(req *request) Caller {
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

// serveFunction answers resources/list, resources/templates/list,
// resources/read, prompts/list, prompts/get and completion/complete: package
// functions reads the params, makes a list's page, runs the function and
// builds the result; this keeps the exchange's part: the cancellable
// context, the Notifier and input answers of prompts/get, the input-required
// result and the writing. It reports false when the endpoint does not serve
// the method after all.
func (h *handler) serveFunction(req *request) bool {
	call, served, pe := h.functions.Read(&functions.Request{
		Method: req.method.Name, Params: req.msg.Params, Caller: callerOf(req), Cacheable: req.method.Cacheable,
	})
	switch {
	case !served:
		return false
	case pe != nil:
		h.callError(req, pe, req.meta != nil)
		return true
	case call.Result != nil:
		h.result(req, call.Result)
		return true
	}
	var (
		n     *Notifier // nil but for a prompt: only its function talks to the client
		ident callIdentity
	)
	if call.Prompt {
		ident = callIdentity{Method: methodPromptsGet, Name: call.Name, Args: call.Arguments, Owner: req.Owner()}
		var in *inputState
		if req.meta != nil {
			var (
				code    int
				problem string
			)
			if in, code, problem = h.states.ReadInput(req.r.Context(), req.msg.Params, ident); problem != "" {
				h.rpcError(req, code, problem, nil)
				return true
			}
		}
		n = h.notifier(req, &req.msg, req.meta, req.session, in)
	}
	ctx, done := h.calls.Context(callParent(req), req.scope, req.id)
	defer done()
	out := call.Run(ctx, n)
	req.w = n.End(req.w) // no notification after this: the reply follows
	if IsModern(req.version) && h.inputRequired(req, n, ident) {
		return true
	}
	res, pe := out.Answer()
	if pe != nil {
		h.callError(req, pe, IsModern(req.version))
		return true
	}
	h.result(req, res)
	return true
}
