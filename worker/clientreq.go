package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/funcmcp/funcmcp/metadata"
)

// Errors of requests to the client (match with errors.Is).
var (
	// ErrNotSupported: the host offers no way to ask the client anything
	// (nor to announce a change: see NotifyResourceUpdated). The real Azure
	// Functions host has none; funchost has one.
	ErrNotSupported = errors.New("requests to the MCP client are not supported by this host")
	// ErrInputRequired: the client's answer is not known yet. On MCP
	// 2026-07-28 a request to the client ends the call with an
	// input-required result; the client answers and calls again, and the
	// handler runs again, this time getting the answer. A handler that gets
	// this error should return it (or any error): the worker answers the
	// call as input-required whatever the handler returns.
	ErrInputRequired = errors.New("the MCP client's answer is required: the call ends now and is run again with it")
)

// CapabilityError is a request the client cannot take: it did not declare
// the capability the method needs. Nothing was sent.
type CapabilityError struct {
	Method     string // e.g. "elicitation/create"
	Capability string // e.g. "elicitation"
}

func (e *CapabilityError) Error() string {
	return fmt.Sprintf("the MCP client does not support %s (no %q capability)", e.Method, e.Capability)
}

// ClientError is the JSON-RPC error the client answered a request with.
type ClientError struct {
	Code    int
	Message string
	Data    json.RawMessage
}

func (e *ClientError) Error() string {
	return fmt.Sprintf("the MCP client answered %d: %s", e.Code, e.Message)
}

// DefaultClientRequestTimeout bounds how long a request to the client waits
// for its answer when [Options.ClientRequestTimeout] is 0.
const DefaultClientRequestTimeout = 10 * time.Minute

// InputRequest is one request to the client: a method and its params. Make
// one with [ElicitationRequest], [SamplingRequest] or [RootsRequest].
type InputRequest struct {
	Method string
	Params any
}

// ElicitationRequest asks the user to fill in requestedSchema (a JSON
// Schema object of primitive properties, as MCP elicitation allows: strings
// with enums or oneOf titles, numbers, booleans, arrays of enums; default
// values shown to the user), with message as the question.
func ElicitationRequest(message string, requestedSchema any) InputRequest {
	return InputRequest{Method: metadata.MethodElicitationCreate, Params: map[string]any{"message": message, "requestedSchema": requestedSchema}}
}

// SamplingRequest asks the client's model to answer.
func SamplingRequest(p *CreateMessageParams) InputRequest {
	return InputRequest{Method: metadata.MethodSamplingCreate, Params: p}
}

// RootsRequest asks the client for its roots.
func RootsRequest() InputRequest {
	return InputRequest{Method: metadata.MethodRootsList, Params: map[string]any{}}
}

// ElicitResult is the user's answer to an elicitation: Action is "accept",
// "decline" or "cancel"; Content holds the values when accepted.
type ElicitResult struct {
	Action  string         `json:"action"`
	Content map[string]any `json:"content,omitempty"`
}

// SamplingMessage is one message of a sampling conversation.
type SamplingMessage struct {
	Role    string  `json:"role"` // "user" or "assistant"
	Content Content `json:"content"`
}

// CreateMessageParams are the params of sampling/createMessage.
type CreateMessageParams struct {
	Messages         []SamplingMessage `json:"messages"`
	MaxTokens        int               `json:"maxTokens"`
	SystemPrompt     string            `json:"systemPrompt,omitempty"`
	Temperature      *float64          `json:"temperature,omitempty"`
	StopSequences    []string          `json:"stopSequences,omitempty"`
	IncludeContext   string            `json:"includeContext,omitempty"`
	ModelPreferences json.RawMessage   `json:"modelPreferences,omitempty"`
}

// CreateMessageResult is the model's answer.
type CreateMessageResult struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Model      string          `json:"model"`
	StopReason string          `json:"stopReason,omitempty"`
}

// Text returns the answer's text when its content is a text block.
func (r *CreateMessageResult) Text() string {
	var b struct {
		Type, Text string
	}
	if json.Unmarshal(r.Content, &b) == nil && b.Type == "text" {
		return b.Text
	}
	return ""
}

// Root is one root of the client.
type Root struct {
	URI  string `json:"uri"`
	Name string `json:"name,omitempty"`
}

// RequestOption changes one request to the client.
type RequestOption func(*requestOptions)

type requestOptions struct{ key string }

// InputKey names the request: the key of its answer and, on MCP
// 2026-07-28, of its entry in the input-required result the client sees.
// Without it the requests of a handler run are named by their method and
// order ("elicitation-1", "sampling-2", …), which stay the same when the
// handler runs again, as long as it asks in the same order.
func InputKey(key string) RequestOption { return func(o *requestOptions) { o.key = key } }

// ClientRequests lets a running tool or prompt ask the MCP client: the user
// (elicitation), the client's model (sampling) or its roots. It is part of
// [ToolContext] and [PromptContext]. Each request checks the capability the
// client declared, honours ctx and the call's own context, and waits at
// most [Options.ClientRequestTimeout] for the answer. Under a host that
// offers no channel (the real Azure Functions host) every request returns
// [ErrNotSupported] at once.
//
// On MCP 2026-07-28 (SEP-2322) a request the client has not answered yet
// returns [ErrInputRequired]: the call ends with an input-required result,
// and the handler runs again, from the start, once the client has
// answered. Code before the first request therefore runs again: keep it
// free of side effects, or ask first.
type ClientRequests struct {
	ch      *notifier
	caps    map[string]json.RawMessage // the client's capabilities; nil when unknown
	mode    string                     // metadata.InputModeStream or InputModeInputRequired
	answers map[string]json.RawMessage // input-required: the answers so far
	timeout time.Duration
	// app, function and invocationID are what the app's hooks see of a
	// request (see hooked); app is nil when nothing hooks them.
	app                    *App
	function, invocationID string

	mu       sync.Mutex
	n        int  // requests made so far in this run, for default keys
	required bool // a request ended the run: the call is input-required
}

// newClientRequests reads the host's offer (see metadata.HeaderInputMode).
func newClientRequests(ch *notifier, h http.Header, timeout time.Duration) *ClientRequests {
	cr := &ClientRequests{ch: ch, mode: h.Get(metadata.HeaderInputMode), timeout: timeout}
	if cr.timeout <= 0 {
		cr.timeout = DefaultClientRequestTimeout
	}
	if v := h.Get(metadata.HeaderClientCapabilities); v != "" {
		_ = metadata.DecodeHeaderJSON(v, &cr.caps)
	}
	if v := h.Get(metadata.HeaderInputResponses); v != "" {
		_ = metadata.DecodeHeaderJSON(v, &cr.answers)
	}
	return cr
}

// supported reports whether the host offers requests to the client.
func (cr *ClientRequests) supported() bool {
	if cr == nil || cr.ch == nil {
		return false
	}
	m := cr.inputMode()
	return m == metadata.InputModeStream || m == metadata.InputModeInputRequired
}

// inputMode is the call's input mode: it changes to stream when the call
// becomes a task (see [ToolContext.RunAsTask]).
func (cr *ClientRequests) inputMode() string {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	return cr.mode
}

// setInputMode changes the input mode (the call became a task).
func (cr *ClientRequests) setInputMode(mode string) {
	if cr == nil {
		return
	}
	cr.mu.Lock()
	cr.mode = mode
	cr.mu.Unlock()
}

// ClientCapabilities returns the capabilities the client declared (each a
// JSON object, e.g. "elicitation", "sampling", "roots"); nil when the host
// does not say.
func (cr *ClientRequests) ClientCapabilities() map[string]json.RawMessage {
	if !cr.supported() {
		return nil
	}
	return cr.caps
}

// Elicit asks the user to fill in requestedSchema (see [ElicitationRequest]).
func (cr *ClientRequests) Elicit(ctx context.Context, message string, requestedSchema any, opts ...RequestOption) (*ElicitResult, error) {
	var out ElicitResult
	if err := cr.one(ctx, ElicitationRequest(message, requestedSchema), opts, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateMessage asks the client's model (sampling).
func (cr *ClientRequests) CreateMessage(ctx context.Context, p *CreateMessageParams, opts ...RequestOption) (*CreateMessageResult, error) {
	var out CreateMessageResult
	if err := cr.one(ctx, SamplingRequest(p), opts, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListRoots asks the client for its roots.
func (cr *ClientRequests) ListRoots(ctx context.Context, opts ...RequestOption) ([]Root, error) {
	var out struct {
		Roots []Root `json:"roots"`
	}
	if err := cr.one(ctx, RootsRequest(), opts, &out); err != nil {
		return nil, err
	}
	return out.Roots, nil
}

// one sends one request and decodes its answer into out.
func (cr *ClientRequests) one(ctx context.Context, req InputRequest, opts []RequestOption, out any) error {
	var o requestOptions
	for _, opt := range opts {
		opt(&o)
	}
	key := o.key
	if key == "" {
		key = cr.nextKey(req.Method)
	}
	answers, err := cr.RequestInput(ctx, map[string]InputRequest{key: req})
	if err != nil {
		return err
	}
	if err := json.Unmarshal(answers[key], out); err != nil {
		return fmt.Errorf("decoding the MCP client's answer to %s: %w", req.Method, err)
	}
	return nil
}

// nextKey is the default key of the next request: "<method kind>-<n>".
func (cr *ClientRequests) nextKey(method string) string {
	if cr == nil {
		return ""
	}
	cr.mu.Lock()
	cr.n++
	n := cr.n
	cr.mu.Unlock()
	return metadata.CapabilityOf(method) + "-" + strconv.Itoa(n)
}

// RequestInput sends several requests to the client at once, named by their
// keys, and returns the answers (each the method's result as JSON) by key.
// On MCP 2026-07-28 all of them go into one input-required result when any
// is unanswered; an answer that does not have the shape of its method's
// result counts as unanswered and is asked again. Every request's
// capability is checked before anything is sent.
func (cr *ClientRequests) RequestInput(ctx context.Context, reqs map[string]InputRequest) (map[string]json.RawMessage, error) {
	if cr == nil || cr.app == nil || len(cr.app.hooks) == 0 {
		return cr.requestInput(ctx, reqs)
	}
	var answers map[string]json.RawMessage
	inv := &Invocation{Kind: KindClientRequest, Function: cr.function, Name: requestNames(reqs), InvocationID: cr.invocationID}
	err := cr.app.runHooks(ctx, inv, func(ctx context.Context) (err error) {
		answers, err = cr.requestInput(ctx, reqs)
		return err
	})
	return answers, err
}

// hooked makes the requests of function's handler run through the app's
// hooks.
func (cr *ClientRequests) hooked(app *App, function, invocationID string) {
	cr.app, cr.function, cr.invocationID = app, function, invocationID
}

// requestInput is RequestInput without the hooks.
func (cr *ClientRequests) requestInput(ctx context.Context, reqs map[string]InputRequest) (map[string]json.RawMessage, error) {
	if !cr.supported() {
		return nil, ErrNotSupported
	}
	keys := make([]string, 0, len(reqs))
	for k := range reqs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys { // in key order: the same error every time
		r := reqs[k]
		capName := metadata.CapabilityOf(r.Method)
		if capName == "" {
			return nil, fmt.Errorf("requesting %q from the MCP client: not a method a tool may send", r.Method)
		}
		if _, ok := cr.caps[capName]; !ok {
			return nil, &CapabilityError{Method: r.Method, Capability: capName}
		}
	}
	out := make(map[string]json.RawMessage, len(reqs))
	if cr.inputMode() == metadata.InputModeInputRequired {
		var pending []string
		for _, k := range keys {
			if a, ok := cr.answers[k]; ok && usableAnswer(reqs[k].Method, a) {
				out[k] = a
			} else {
				pending = append(pending, k)
			}
		}
		if len(pending) == 0 {
			return out, nil
		}
		for _, k := range pending {
			if _, err := cr.send(ctx, k, reqs[k]); err != nil {
				return nil, err
			}
		}
		cr.mu.Lock()
		cr.required = true
		cr.mu.Unlock()
		return nil, ErrInputRequired
	}
	if len(keys) == 1 {
		res, err := cr.send(ctx, keys[0], reqs[keys[0]])
		if err != nil {
			return nil, err
		}
		out[keys[0]] = res
		return out, nil
	}
	// Several at once: all are asked together (a task shows them all as
	// pending), the first failure gives up the others.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		key string
		res json.RawMessage
		err error
	}
	answers := make(chan answer, len(keys))
	for _, k := range keys {
		go func() {
			res, err := cr.send(ctx, k, reqs[k])
			answers <- answer{k, res, err}
		}()
	}
	var first error
	for range keys {
		a := <-answers
		if a.err != nil && first == nil {
			first = a.err
			cancel()
		}
		out[a.key] = a.res
	}
	if first != nil {
		return nil, first
	}
	return out, nil
}

// usableAnswer reports whether raw has the shape of a result of method:
// an answer that does not (12345 for an elicitation) is asked again, as if
// it were missing, rather than handed to the handler.
func usableAnswer(method string, raw json.RawMessage) bool {
	switch method {
	case metadata.MethodElicitationCreate:
		var r struct {
			Action  string          `json:"action"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &r) != nil {
			return false
		}
		c := bytes.TrimSpace(r.Content)
		okContent := len(c) == 0 || bytes.Equal(c, []byte("null")) || c[0] == '{'
		return okContent && (r.Action == "accept" || r.Action == "decline" || r.Action == "cancel")
	case metadata.MethodSamplingCreate:
		var r struct {
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &r) != nil {
			return false
		}
		c := bytes.TrimSpace(r.Content)
		return len(c) > 0 && (c[0] == '{' || c[0] == '[')
	case metadata.MethodRootsList:
		var r struct {
			Roots *[]Root `json:"roots"`
		}
		return json.Unmarshal(raw, &r) == nil && r.Roots != nil
	}
	return false
}

// inputRequired reports whether a request ended this run.
func (cr *ClientRequests) inputRequired() bool {
	if cr == nil {
		return false
	}
	cr.mu.Lock()
	defer cr.mu.Unlock()
	return cr.required
}

// requestClient sends requests to the host: no overall timeout, each
// request is bounded by its context (the answer may take the user a while).
var requestClient = &http.Client{Transport: notifyClient.Transport}

// send POSTs one request notification and returns the client's result.
func (cr *ClientRequests) send(ctx context.Context, key string, r InputRequest) (json.RawMessage, error) {
	params, err := metadata.Marshal(r.Params)
	if err != nil {
		return nil, fmt.Errorf("encoding the %s request: %w", r.Method, err)
	}
	body, err := metadata.Marshal(&metadata.Notification{Type: metadata.NotificationRequest, Key: key, Method: r.Method, Params: params})
	if err != nil || len(body) > metadata.MaxRequestBytes {
		return nil, fmt.Errorf("the %s request is larger than %d bytes", r.Method, metadata.MaxRequestBytes)
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, cr.timeout)
	defer cancel()
	stop := context.AfterFunc(cr.ch.ctx, cancel) // the invocation ended
	defer stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cr.ch.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", cr.ch.auth)
	req.Header.Set("Content-Type", "application/json")
	resp, err := cr.ch.requestsClient().Do(req)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && parent.Err() == nil && cr.ch.ctx.Err() == nil {
			return nil, fmt.Errorf("the MCP client did not answer %s within %v: %w", r.Method, cr.timeout, context.DeadlineExceeded)
		}
		return nil, fmt.Errorf("sending %s to the MCP client: %w", r.Method, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("reading the MCP client's answer to %s: %w", r.Method, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("sending %s to the MCP client: the host answered %s: %s", r.Method, resp.Status, bytes.TrimSpace(data))
	}
	var reply metadata.RequestReply
	if err := json.Unmarshal(data, &reply); err != nil {
		return nil, fmt.Errorf("reading the MCP client's answer to %s: %w", r.Method, err)
	}
	switch {
	case reply.Error != nil:
		return nil, &ClientError{Code: reply.Error.Code, Message: reply.Error.Message, Data: reply.Error.Data}
	case reply.InputRequired:
		return nil, nil // the host keeps it for the input-required result
	case len(reply.Result) == 0:
		return nil, fmt.Errorf("the MCP client's answer to %s is empty", r.Method)
	}
	return reply.Result, nil
}
