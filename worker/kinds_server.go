package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// ErrInvalidParams, wrapped in a prompt handler's or completion function's
// error, says the request's arguments are wrong (JSON-RPC -32602 under
// funchost).
var ErrInvalidParams = errors.New("invalid params")

// serveKind answers POST /{function} for a resource, template, MCP App
// view or prompt, and every funcmcp request that names a method
// (metadata.HeaderMethod). It reports false when the function is none of
// these, for the tool path to answer.
func (s *server) serveKind(w http.ResponseWriter, r *http.Request, fn string) bool {
	method := r.Header.Get(metadata.HeaderMethod)
	k := s.c.kinds[strings.ToLower(fn)]
	switch {
	case k == nil && method == "":
		return false
	case k == nil && s.lookup(fn) != nil:
		writeJSONError(w, http.StatusBadRequest, fmt.Sprintf("function %q is a tool: %s applies to prompts and resource templates", fn, method))
		return true
	case k == nil:
		writeJSONError(w, http.StatusNotFound, fmt.Sprintf("no function %q", fn))
		return true
	case method != "" && !metadata.WorkerAnswers(method):
		writeJSONError(w, http.StatusBadRequest, fmt.Sprintf("unknown method %q", method))
		return true
	}
	raw, ok := s.triggerValue(w, r, k)
	if !ok {
		return true
	}
	invocationID := r.Header.Get(metadata.HeaderInvocationID)
	s.app.logger.LogAttrs(r.Context(), slog.LevelDebug, "invocation",
		slog.String("function", k.function), slog.String("method", method), slog.String("invocationId", invocationID))
	// funchost lists the direct reply in Accept and gets the method's
	// result object as it is; everyone else (the Functions host) gets
	// today's reply, the envelope as a string in ReturnValue.
	direct := metadata.AcceptsDirectResult(r.Header.Get("Accept"))
	var (
		logs  *logBook
		value []byte // the ReturnValue's text, nil for null; the result object when direct
		fail  *metadata.FailureReply
	)
	switch {
	case method == metadata.MethodComplete:
		logs, value, fail = s.complete(r.Context(), k, raw, invocationID)
	case k.prompt != nil:
		logs, value, fail = s.getPrompt(r.Context(), k, raw, invocationID, r.Header, direct)
	default:
		logs, value, fail = s.readResource(r.Context(), k, raw, invocationID, direct)
	}
	if fail != nil {
		writeFailure(w, fail, logs.Logs())
		return true
	}
	if direct {
		resp := make([]byte, 0, len(value)+64)
		resp = append(resp, `{"Logs":`...)
		resp = appendLogs(resp, logs.Logs())
		resp = append(resp, `,"Result":`...)
		resp = append(resp, value...)
		resp = append(resp, '}')
		writeReply(w, http.StatusOK, metadata.MediaTypeDirectResult, resp)
		return true
	}
	resp := []byte(`{"Outputs":{},"Logs":`)
	resp = appendLogs(resp, logs.Logs())
	resp = append(resp, `,"ReturnValue":`...)
	if value == nil {
		resp = append(resp, "null"...)
	} else {
		resp = metadata.AppendJSONString(resp, string(value))
	}
	resp = append(resp, '}')
	writeReply(w, http.StatusOK, "application/json", resp)
	return true
}

// triggerValue reads the invocation body and returns Data's trigger value,
// answering the request itself when it cannot.
func (s *server) triggerValue(w http.ResponseWriter, r *http.Request, k *served) (json.RawMessage, bool) {
	req, ok := s.readInvocation(w, r)
	if !ok {
		return nil, false
	}
	name := metadata.TriggerBindingName
	if k.resource != nil && k.resource.Binding != "" {
		name = k.resource.Binding
	} else if k.prompt != nil && k.prompt.Binding != "" {
		name = k.prompt.Binding
	}
	raw, err := metadata.TriggerValue(req, name)
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, err.Error())
		return nil, false
	}
	return raw, true
}

// failure is a failed request's reply: code is the JSON-RPC code the host
// should answer with.
func failure(code int, format string, args ...any) *metadata.FailureReply {
	return &metadata.FailureReply{Error: fmt.Sprintf(format, args...), Code: code}
}

// writeFailure answers a failed invocation: HTTP 500 with the failure reply
// and the invocation's logs.
func writeFailure(w http.ResponseWriter, fail *metadata.FailureReply, logs []string) {
	writeReply(w, http.StatusInternalServerError, "application/json", failureBody(fail, logs))
}

// failureBody is the body of a failure reply: fail with the call's logs.
func failureBody(fail *metadata.FailureReply, logs []string) []byte {
	fail.Logs = logs
	data, _ := metadata.Marshal(fail)
	return data
}

// capabilityFailure is the reply to a handler's error that wraps a
// [CapabilityError]: -32021 (MissingRequiredClientCapabilityError) naming
// the capability in data.requiredCapabilities; nil for any other error.
func capabilityFailure(err error) *metadata.FailureReply {
	var ce *CapabilityError
	if !errors.As(err, &ce) {
		return nil
	}
	data := metadata.AppendJSONString([]byte(`{"requiredCapabilities":{`), ce.Capability)
	data = append(data, `:{}}}`...)
	return &metadata.FailureReply{Error: err.Error(), Code: metadata.CodeMissingRequiredClientCapability, Data: data}
}

// handlerFailure is the reply to a handler's error: -32021 for a
// CapabilityError, -32002 for ErrResourceNotFound, -32602 for
// ErrInvalidParams, else -32603.
func handlerFailure(err error) *metadata.FailureReply {
	if fail := capabilityFailure(err); fail != nil {
		return fail
	}
	code := metadata.CodeInternalError
	switch {
	case errors.Is(err, ErrResourceNotFound):
		code = metadata.CodeResourceNotFound
	case errors.Is(err, ErrInvalidParams):
		code = metadata.CodeInvalidParams
	}
	return &metadata.FailureReply{Error: err.Error(), Code: code}
}

// guard runs f, turning a panic into an error (its stack goes to Stderr).
func (s *server) guard(what string, f func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s panicked: %v", what, p)
			fmt.Fprintf(s.app.stderr, "%v\n%s", err, debug.Stack())
		}
	}()
	return f()
}

// readResource reads a resource: the value is the envelope of today's
// ReturnValue, or the ReadResourceResult itself when direct (a
// resource that returns nothing has no contents).
func (s *server) readResource(ctx context.Context, k *served, raw json.RawMessage, invocationID string, direct bool) (*logBook, []byte, *metadata.FailureReply) {
	rc := &ResourceContext{InvocationID: invocationID, FunctionName: k.function}
	ic, err := metadata.DecodeResourceInvocationContext(raw)
	if err != nil {
		return &rc.logBook, nil, failure(metadata.CodeInvalidParams, "%v", err)
	}
	rc.URI, rc.SessionID, rc.ClientInfo, rc.Transport = ic.URI, ic.SessionID, ic.ClientInfo, ic.Transport
	what := fmt.Sprintf("%s %s", k.resource.Kind(), k.resource.URI)
	if se := checkScopes(fmt.Sprintf("%s '%s'", k.resource.Kind(), k.resource.URI), k.resource.RequiredScopes, ic.Transport); se != nil {
		rc.Logf("%v", se)
		return &rc.logBook, nil, scopeFailure(se)
	}
	if k.resource.Template != nil {
		vars, ok := k.resource.Template.Match(ic.URI)
		if !ok {
			return &rc.logBook, nil, failure(metadata.CodeResourceNotFound, "resource %q is not served by the template %q", ic.URI, k.resource.URI)
		}
		rc.Variables = vars
	}

	var contents metadata.ResourceContents
	if k.view != nil {
		if contents, err = k.view.viewContents(k.toolName, s.app.appRoot()); err != nil {
			rc.Logf("%v", err)
			return &rc.logBook, nil, failure(metadata.CodeInternalError, "%v", err)
		}
	} else {
		var res *ResourceResult
		inv := &Invocation{Kind: KindResource, Function: k.function, Name: ic.URI, InvocationID: invocationID, transport: ic.Transport}
		err := s.guard(what, func() error {
			return s.app.runHooks(ctx, inv, func(ctx context.Context) (err error) { res, err = k.readResource(ctx, rc); return err })
		})
		if err != nil {
			rc.Logf("%s failed: %v", what, err)
			return &rc.logBook, nil, handlerFailure(err)
		}
		if res == nil {
			if direct {
				return &rc.logBook, []byte(`{"contents":[]}`), nil
			}
			return &rc.logBook, nil, nil
		}
		if contents, err = res.contents(ic.URI, k.resource.MimeType); err == nil && contents.MimeType != "" {
			err = binding.CheckMimeType(contents.MimeType)
		}
		if err != nil {
			rc.Logf("%s returned an invalid result: %v", what, err)
			return &rc.logBook, nil, failure(metadata.CodeInternalError, "%s returned an invalid result: %v", what, err)
		}
	}
	if direct {
		// The contents are built from typed values and checked above:
		// they are what the host's reading of the envelope would give.
		out := append([]byte(`{"contents":[`), contents.AppendJSON(nil)...)
		return &rc.logBook, append(out, "]}"...), nil
	}
	env := []byte(`{"content":`)
	env = metadata.AppendJSONString(env, string(contents.AppendJSON(nil)))
	env = append(env, '}')
	// Read it back as the host will: what the worker sends, the host takes.
	if _, err := k.resource.DecodeReturnValue(metadata.AppendJSONString(nil, string(env)), ic.URI); err != nil {
		rc.Logf("%s returned an invalid result: %v", what, err)
		return &rc.logBook, nil, failure(metadata.CodeInternalError, "%s returned an invalid result: %v", what, err)
	}
	return &rc.logBook, env, nil
}

// getPrompt gets a prompt: the value is the envelope of today's
// ReturnValue, or the GetPromptResult itself when direct.
func (s *server) getPrompt(ctx context.Context, k *served, raw json.RawMessage, invocationID string, hdr http.Header, direct bool) (*logBook, []byte, *metadata.FailureReply) {
	pc := &PromptContext{InvocationID: invocationID, FunctionName: k.function,
		ClientRequests: newClientRequests(newNotifier(ctx, hdr), hdr, s.app.clientTimeout)}
	ic, err := metadata.DecodePromptInvocationContext(raw)
	if err != nil {
		return &pc.logBook, nil, failure(metadata.CodeInvalidParams, "%v", err)
	}
	if se := checkScopes("prompt '"+k.prompt.Name+"'", k.prompt.RequiredScopes, ic.Transport); se != nil {
		pc.Logf("%v", se)
		return &pc.logBook, nil, scopeFailure(se)
	}
	if missing := k.prompt.MissingArguments(ic.Arguments); len(missing) > 0 {
		return &pc.logBook, nil, failure(metadata.CodeInvalidParams, "%s", binding.MissingPromptArgumentsMessage(missing))
	}
	pc.Name, pc.Arguments, pc.SessionID, pc.ClientInfo, pc.Transport = ic.Name, ic.StringArguments(), ic.SessionID, ic.ClientInfo, ic.Transport
	what := "prompt " + k.prompt.Name
	var res *PromptResult
	pc.ClientRequests.hooked(s.app, k.function, invocationID)
	inv := &Invocation{Kind: KindPrompt, Function: k.function, Name: k.prompt.Name, InvocationID: invocationID, transport: ic.Transport}
	err = s.guard(what, func() error {
		return s.app.runHooks(ctx, inv, func(ctx context.Context) (err error) { res, err = k.getPrompt(ctx, pc); return err })
	})
	if pc.inputRequired() {
		// The host answers the request with the requests it was sent.
		return &pc.logBook, nil, failure(metadata.CodeInternalError, "%s needs the MCP client's input: %v", what, ErrInputRequired)
	}
	if err != nil {
		pc.Logf("%s failed: %v", what, err)
		return &pc.logBook, nil, handlerFailure(err)
	}
	if res == nil {
		if direct {
			return &pc.logBook, []byte(`{"messages":[]}`), nil
		}
		return &pc.logBook, nil, nil
	}
	gpr, err := res.getPromptResult()
	if direct && err == nil {
		// The checks the host's reading of the envelope makes, on the
		// typed result.
		// (getPromptResult compacted every content block already.)
		for i, m := range gpr.Messages {
			if m.Role != metadata.RoleUser && m.Role != metadata.RoleAssistant {
				err = fmt.Errorf("message %d: role %q is not user or assistant", i, m.Role)
			} else if len(m.Content) == 0 || jsonx.IsNull(m.Content) {
				err = fmt.Errorf("message %d: the content is missing", i)
			} else if err = binding.CheckContentBlock(m.Content); err != nil {
				err = fmt.Errorf("message %d: %w", i, err)
			}
			if err != nil {
				break
			}
		}
		var out []byte
		if err == nil {
			out, err = metadata.Marshal(gpr)
		}
		if err != nil {
			pc.Logf("%s returned an invalid result: %v", what, err)
			return &pc.logBook, nil, failure(metadata.CodeInternalError, "%s returned an invalid result: %v", what, err)
		}
		return &pc.logBook, bytes.TrimRight(out, "\n"), nil
	}
	var env []byte
	if err == nil {
		var content []byte
		if content, err = metadata.Marshal(gpr); err == nil {
			env, err = metadata.Marshal(metadata.PromptResult{Content: string(content), Type: metadata.PromptResultTypeGetPromptResult})
		}
	}
	if err == nil {
		// Read it back as the host will: what the worker sends, the host takes.
		_, err = k.prompt.DecodeReturnValue(metadata.AppendJSONString(nil, string(env)))
	}
	if err != nil {
		pc.Logf("%s returned an invalid result: %v", what, err)
		return &pc.logBook, nil, failure(metadata.CodeInternalError, "%s returned an invalid result: %v", what, err)
	}
	return &pc.logBook, env, nil
}

func (s *server) complete(ctx context.Context, k *served, raw json.RawMessage, invocationID string) (*logBook, []byte, *metadata.FailureReply) {
	cc := &CompletionContext{FunctionName: k.function}
	ic, err := metadata.DecodeCompletionContext(raw)
	if err != nil {
		return &cc.logBook, nil, failure(metadata.CodeInvalidParams, "%v", err)
	}
	cc.Argument, cc.Value = ic.Argument.Name, ic.Argument.Value
	cc.SessionID, cc.ClientInfo, cc.Transport = ic.SessionID, ic.ClientInfo, ic.Transport
	if ic.Context != nil {
		cc.Arguments = ic.Context.Arguments
	}
	var (
		source metadata.CompletionSource
		found  bool
	)
	switch {
	case k.prompt != nil && ic.Ref.Type == metadata.RefPrompt && strings.EqualFold(ic.Ref.Name, k.prompt.Name):
		cc.Prompt = k.prompt.Name
		source, found = k.prompt.Completion(ic.Argument.Name)
	case k.resource != nil && k.resource.Template != nil && ic.Ref.Type == metadata.RefResource && strings.EqualFold(ic.Ref.URI, k.resource.URI):
		cc.URITemplate = k.resource.URI
		source, found = k.resource.Completion(ic.Argument.Name)
	default:
		return &cc.logBook, nil, failure(metadata.CodeInvalidParams, "the completion ref %s %q does not name the prompt or resource template of function %q",
			ic.Ref.Type, ic.Ref.Name+ic.Ref.URI, k.function)
	}
	var res *metadata.CompleteResult
	switch {
	case !found:
		res = &metadata.CompleteResult{}
	case !source.Dynamic:
		res = binding.CompleteValues(source.Values, ic.Argument.Value)
	default:
		h := k.completions[source.Name]
		var values []string
		what := fmt.Sprintf("the completion of %q", source.Name)
		inv := &Invocation{Kind: KindCompletion, Function: k.function, Name: ic.Argument.Name, InvocationID: invocationID}
		err := s.guard(what, func() error {
			return s.app.runHooks(ctx, inv, func(ctx context.Context) (err error) { values, err = h(ctx, cc); return err })
		})
		if err != nil {
			cc.Logf("%s failed: %v", what, err)
			return &cc.logBook, nil, handlerFailure(err)
		}
		res = binding.CompleteResultOf(values)
	}
	data, err := metadata.Marshal(res)
	if err != nil {
		return &cc.logBook, nil, failure(metadata.CodeInternalError, "encoding the completion: %v", err)
	}
	return &cc.logBook, data, nil
}
