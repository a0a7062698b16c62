package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/host/internal/catalog"
	"github.com/funcmcp/funcmcp/host/internal/invoke"
	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// functionLists are the list entries of the catalog, for the MCP endpoint.
func functionLists(cat *catalog.Catalog) *mcp.FunctionLists {
	return &mcp.FunctionLists{
		Resources:   cat.ResourceEntries(),
		Templates:   cat.TemplateEntries(),
		Prompts:     cat.PromptEntries(),
		Completions: len(cat.TemplateEntries()) > 0 || len(cat.PromptEntries()) > 0,
	}
}

// readResource serves resources/read: the URI is checked as the extension
// checks it, matched against the static resources and then the templates,
// and read by invoking the function that serves it.
func (h *Host) readResource(ctx context.Context, req *mcp.ReadRequest) (mcp.Result[metadata.ReadResourceResult], error) {
	var none mcp.Result[metadata.ReadResourceResult]
	if err := binding.ValidateResourceURI(req.URI); err != nil {
		return none, &mcp.ProtocolError{Code: mcp.CodeInvalidParams, Message: "Invalid params: " + jsonx.OneLine(err.Error()),
			Data: map[string]string{"uri": req.URI}}
	}
	res, _, ok := h.cat.LookupResource(req.URI)
	if !ok {
		return none, mcp.ResourceNotFound(req.ProtocolVersion, req.URI)
	}
	c := metadata.ResourceInvocationContext{URI: req.URI, SessionID: req.SessionID, ClientInfo: req.ClientInfo,
		Transport: transportOf(&req.Caller)}
	fn := &invoke.Function{Name: res.Function, DataKey: dataKey(res.Binding), Tool: res.URI, Encoded: true}
	reply, err := h.invokeFunction(ctx, fn, "resource "+res.URI, c, nil)
	if err != nil {
		if pe, ok := errors.AsType[*mcp.ProtocolError](err); ok && pe.Code == metadata.CodeResourceNotFound {
			nf := mcp.ResourceNotFound(req.ProtocolVersion, req.URI)
			nf.Message = pe.Message // the worker says why
			return none, nf
		}
		return none, err
	}
	if raw := reply.Encoded(); raw != nil {
		return encodedResult[metadata.ReadResourceResult](ctx, h, fn, raw, "contents")
	}
	out, err := res.DecodeReturnValue(reply.ReturnValue(), req.URI)
	if err != nil {
		return none, h.functionFailed(ctx, fn, err)
	}
	return mcp.Result[metadata.ReadResourceResult]{Value: out}, nil
}

// getPrompt serves prompts/get: required arguments are checked before the
// function that serves the prompt is invoked.
func (h *Host) getPrompt(ctx context.Context, req *mcp.PromptRequest) (mcp.Result[metadata.GetPromptResult], error) {
	var none mcp.Result[metadata.GetPromptResult]
	p, ok := h.cat.Prompt(req.Name)
	if !ok {
		return none, &mcp.ProtocolError{Code: mcp.CodeInvalidParams, Message: fmt.Sprintf("Unknown prompt: '%s'", jsonx.SafeText(req.Name))}
	}
	if missing := p.MissingArguments(req.Arguments); len(missing) > 0 {
		return none, &mcp.ProtocolError{Code: mcp.CodeInvalidParams, Message: binding.MissingPromptArgumentsMessage(missing)}
	}
	c := metadata.PromptInvocationContext{Name: p.Name, Arguments: req.Arguments, SessionID: req.SessionID,
		ClientInfo: req.ClientInfo, Transport: transportOf(&req.Caller)}
	fn := &invoke.Function{Name: p.Function, DataKey: dataKey(p.Binding), Tool: p.Name, Encoded: true}
	reply, err := h.invokeFunction(ctx, fn, "prompt "+p.Name, c, req.Notify)
	if err != nil {
		return none, err
	}
	if raw := reply.Encoded(); raw != nil {
		return encodedResult[metadata.GetPromptResult](ctx, h, fn, raw, "messages")
	}
	out, err := p.DecodeReturnValue(reply.ReturnValue())
	if err != nil {
		return none, h.functionFailed(ctx, fn, err)
	}
	return mcp.Result[metadata.GetPromptResult]{Value: out}, nil
}

// complete serves completion/complete for a prompt argument or a template
// variable: a fixed list is answered here, a dynamic one by the worker.
func (h *Host) complete(ctx context.Context, req *mcp.CompleteRequest) (mcp.Result[metadata.CompleteResult], error) {
	var none mcp.Result[metadata.CompleteResult]
	var (
		src      metadata.CompletionSource
		has      bool
		function string
		key      string
	)
	switch req.Ref.Type {
	case metadata.RefPrompt:
		p, ok := h.cat.Prompt(req.Ref.Name)
		if !ok {
			return none, &mcp.ProtocolError{Code: mcp.CodeInvalidParams, Message: fmt.Sprintf("Unknown prompt: '%s'", jsonx.SafeText(req.Ref.Name))}
		}
		src, has = p.Completion(req.Argument.Name)
		function, key = p.Function, dataKey(p.Binding)
	case metadata.RefResource:
		t, ok := h.cat.Template(req.Ref.URI)
		if !ok {
			return none, &mcp.ProtocolError{Code: mcp.CodeInvalidParams, Message: fmt.Sprintf("Unknown resource template: '%s'", jsonx.SafeText(req.Ref.URI))}
		}
		src, has = t.Completion(req.Argument.Name)
		function, key = t.Function, dataKey(t.Binding)
	default:
		return none, &mcp.ProtocolError{Code: mcp.CodeInvalidParams, Message: fmt.Sprintf("Invalid params: ref.type '%s' is not %s or %s",
			jsonx.SafeText(req.Ref.Type), metadata.RefPrompt, metadata.RefResource)}
	}
	switch {
	case !has:
		return mcp.Result[metadata.CompleteResult]{Value: binding.CompleteResultOf(nil)}, nil
	case !src.Dynamic:
		return mcp.Result[metadata.CompleteResult]{Value: binding.CompleteValues(src.Values, req.Argument.Value)}, nil
	}
	c := metadata.CompletionContext{Ref: req.Ref, Argument: req.Argument, SessionID: req.SessionID,
		ClientInfo: req.ClientInfo, Transport: transportOf(&req.Caller)}
	if len(req.Arguments) > 0 {
		c.Context = &metadata.CompletionArguments{Arguments: req.Arguments}
	}
	fn := &invoke.Function{Name: function, DataKey: key, Tool: req.Argument.Name, Method: metadata.MethodComplete, Encoded: true}
	reply, err := h.invokeFunction(ctx, fn, "completion of "+req.Argument.Name, c, nil)
	if err != nil {
		return none, err
	}
	if raw := reply.Encoded(); raw != nil {
		return encodedResult[metadata.CompleteResult](ctx, h, fn, raw, "completion")
	}
	out, err := binding.DecodeCompletionReturnValue(reply.ReturnValue())
	if err != nil {
		return none, h.functionFailed(ctx, fn, err)
	}
	return mcp.Result[metadata.CompleteResult]{Value: out}, nil
}

// encodedResult is the result of a direct reply: the worker's result
// object, checked once (one JSON object with its member need) and served as
// the worker encoded it.
func encodedResult[T any](ctx context.Context, h *Host, fn *invoke.Function, raw []byte, need string) (mcp.Result[T], error) {
	enc, err := mcp.EncodedResult(raw, need)
	if err != nil {
		return mcp.Result[T]{}, h.functionFailed(ctx, fn, fmt.Errorf("the direct reply: %w", err))
	}
	return mcp.Result[T]{Encoded: enc}, nil
}

// dataKey is the invocation's Data key for a trigger binding name.
func dataKey(name string) string {
	if name == "" {
		return metadata.TriggerBindingName
	}
	return name
}

// transportOf is the invocation context's transport of a request.
func transportOf(c *mcp.Caller) *metadata.Transport {
	t := &metadata.Transport{Name: c.Transport, SessionID: c.SessionID}
	if t.Name == "" {
		t.Name = metadata.TransportStreamableHTTP
	}
	if hs := invoke.ForwardedHeaders(c.Headers); len(hs) > 0 {
		t.Properties = &metadata.TransportProperties{Headers: metadata.MakeHeaders(hs)}
	}
	return t
}

// invokeFunction runs one resource, prompt or completion request on the
// worker, with the same admission, drain, time limit and cancellation as a
// tool call, and logs it as the Functions host does. A failure the worker
// explains (metadata.FailureReply) becomes the JSON-RPC error it names;
// any other failure the extension's generic error.
func (h *Host) invokeFunction(ctx context.Context, fn *invoke.Function, what string, trigger any, notify *mcp.Notifier) (*invoke.Reply, error) {
	ctxJSON, err := metadata.Marshal(trigger)
	if err != nil {
		return nil, h.functionFailed(ctx, fn, fmt.Errorf("encoding the %s context: %w", what, err))
	}
	ctx, iv, done, err := h.admit(ctx, fn.Name, false, "")
	if err != nil {
		return nil, err
	}
	defer done()
	h.traceLogs(ctx, notify)
	offer, closeChannel := h.notify.Open(iv.id, notify)
	defer closeChannel()
	reply, err := h.inv.Invoke(ctx, fn, iv.id, invoke.ContextBody(fn, ctxJSON, iv.start), offer)
	if ctx.Err() != nil {
		if stopping := iv.cancelled(ctx); stopping != nil {
			return nil, stopping
		}
		return nil, &mcp.ProtocolError{Code: mcp.CodeInternalError, Message: "Request cancelled"}
	}
	if err != nil {
		if fr := failureOf(err); fr != nil {
			iv.workerLogs(ctx, fr.Logs)
			if notify.InputPending() {
				// The worker ended the run to ask the client: the request is
				// answered with an input-required result.
				iv.executed(ctx, "Input required")
			} else {
				iv.executed(ctx, "Failed", slog.String("reason", fr.Error))
			}
			return nil, protocolError(fr)
		}
		iv.executed(ctx, "Failed")
		return nil, h.functionFailed(ctx, fn, err)
	}
	iv.workerLogs(ctx, reply.Logs)
	iv.executed(ctx, "Succeeded")
	return reply, nil
}

// functionFailed logs why a request failed and returns the extension's
// generic error for it.
func (h *Host) functionFailed(ctx context.Context, fn *invoke.Function, err error) error {
	h.log.LogAttrs(ctx, slog.LevelError, fmt.Sprintf("invoking function '%s' failed: %v", fn.Name, err), slog.String("function", fn.Name))
	return &mcp.ProtocolError{Code: mcp.CodeInternalError, Message: fmt.Sprintf("An error occurred invoking '%s'.", fn.Name)}
}

// failureReply is a worker's explained failure.
type failureReply = metadata.FailureReply

// failureOf returns the failure a worker explained, nil for any other
// error.
func failureOf(err error) *failureReply {
	var ie *invoke.Error
	var fr failureReply
	if errors.As(err, &ie) && len(ie.Body) > 0 && json.Unmarshal(ie.Body, &fr) == nil && fr.Code != 0 {
		return &fr
	}
	return nil
}

// protocolError is the JSON-RPC error a failure names.
func protocolError(fr *failureReply) *mcp.ProtocolError {
	pe := &mcp.ProtocolError{Code: fr.Code, Message: fr.Error}
	if len(fr.Data) > 0 && json.Valid(fr.Data) {
		pe.Data = fr.Data
	}
	return pe
}
