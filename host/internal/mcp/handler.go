package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
	"github.com/funcmcp/funcmcp/host/internal/mcp/functions"
	"github.com/funcmcp/funcmcp/host/internal/mcp/listen"
	"github.com/funcmcp/funcmcp/host/internal/mcp/sessions"
	"github.com/funcmcp/funcmcp/host/internal/mcp/taskrun"
	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// Canonical header keys, looked up in the header map directly.
const (
	headerAccept          = "Accept"
	headerSessionID       = "Mcp-Session-Id"
	headerProtocolVersion = "Mcp-Protocol-Version"
)

// Shared header values; net/http never writes into them.
var (
	allowPost       = []string{http.MethodPost}
	jsonContentType = []string{"application/json"}
)

type handler struct {
	replies // writes the answers
	srv     Server
	chain   MethodHandler // the middleware chain around dispatch
	log     *slog.Logger
	maxBody int64
	// maxBatch and maxBatchReply bound a JSON-RPC batch: its messages and
	// the bytes of its replies.
	maxBatch, maxBatchReply int
	versions                []string          // snapshot of SupportedVersions
	calls                   clientreq.Calls   // running tools/call, for notifications/cancelled
	sealer                  *auth.Sealer      // seals and opens session tokens
	keeper                  *sessions.Keeper  // mints and opens session tokens
	initial                 map[string][]byte // negotiated version → initialize result JSON

	modern           []string // snapshot of ModernVersions
	discoverVersions []string // every revision served, newest first
	modernReplies    *modernReplies

	lists  [2]wire.PreparedArray // the prepared tools/list arrays: legacy, modern
	levels *sessions.Levels      // logging/setLevel choices

	functions *functions.Server // resources, prompts and completions

	instanceID      string // names this instance in request ids
	forwardResponse func(ctx context.Context, instanceID, scope string, body []byte) error
	waits           clientreq.Waits       // requests to clients waiting for their answer
	notifiers       *clientreq.Channel    // what the calls' Notifiers share
	streams         clientreq.Store       // resumable streams
	streamCalls     *clientreq.Goroutines // where the calls of resumable streams run
	resumeGrace     time.Duration
	tasks           *taskrun.Service            // nil when tasks are off
	taskCalls       taskCalls                   // what the calls of tasks need of the core
	checkArgs       func(json.RawMessage) error // Options.CheckArguments
	states          *clientreq.States           // request states: given, opened, spent

	hub       *notify.Hub      // nil when notifications are off
	sessions  *listen.Sessions // the legacy sessions' subscriptions
	shared    taskrun.Shared   // the tasks being written to listeners
	listeners *listen.Server   // serves the notification streams
}

func newHandler(srv Server, opts *Options) *handler {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.ServerInfo.Name == "" {
		o.ServerInfo.Name = metadata.DefaultServerName
	}
	if o.ServerInfo.Version == "" {
		o.ServerInfo.Version = metadata.DefaultServerVersion
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.CacheScope == "" {
		o.CacheScope = CacheScopePrivate
	}
	o.CacheTTL = max(o.CacheTTL, 0)
	if o.SessionLifetime <= 0 {
		o.SessionLifetime = DefaultSessionLifetime
	}
	if o.MaxBatchMessages <= 0 {
		o.MaxBatchMessages = DefaultMaxBatchMessages
	}
	if o.MaxBatchReplyBytes <= 0 {
		o.MaxBatchReplyBytes = DefaultMaxBatchReplyBytes
	}
	if o.PageSize <= 0 {
		o.PageSize = DefaultPageSize
	}
	if o.ResumeGrace <= 0 {
		o.ResumeGrace = DefaultResumeGrace
	}
	if o.InstanceID == "" || strings.Contains(o.InstanceID, requestIDSeparator) {
		o.InstanceID = newID()
	}
	h := &handler{
		sealer:   checkSealer(&o),
		srv:      srv,
		log:      o.Logger,
		replies:  replies{log: o.Logger},
		maxBody:  o.MaxBodyBytes,
		maxBatch: o.MaxBatchMessages, maxBatchReply: o.MaxBatchReplyBytes,
		versions: slices.Clone(SupportedVersions),
		initial:  make(map[string][]byte, len(SupportedVersions)),
		modern:   slices.Clone(ModernVersions),
		levels:   sessions.NewLevels(DefaultMaxLogSessions),

		instanceID:      o.InstanceID,
		forwardResponse: o.ForwardResponse,
		resumeGrace:     o.ResumeGrace,
		checkArgs:       o.CheckArguments,
		streams:         clientreq.NewStore(o.ResumeStreams, o.ResumeBytes),
		streamCalls:     clientreq.NewGoroutines(0),
	}
	h.notifiers = &clientreq.Channel{Waits: &h.waits, NewRequestID: clientreq.RequestIDs(o.InstanceID, o.RequestID), HasCapability: hasCapability}
	h.keeper = sessions.NewKeeper(h.sealer, o.SessionLifetime, h.versions)
	h.states = clientreq.NewStates(h.sealer, o.UsedInputStates, o.SpentStates, o.Logger)
	if o.ListenKeepAlive <= 0 {
		o.ListenKeepAlive = DefaultListenKeepAlive
	}
	if o.ListenWriteTimeout <= 0 {
		o.ListenWriteTimeout = DefaultListenWriteTimeout
	}
	if o.Notify != nil {
		h.hub = o.Notify
		h.sessions = listen.NewSessions(o.Notify, o.SubscribedSessions, o.SubscriptionBytes, o.SubscriptionGrace, DefaultSessionLifetime)
	}
	if o.Tasks != nil && o.Tasks.Store != nil {
		h.tasks = taskrun.NewService(o.Tasks, o.InstanceID, o.Logger)
		if h.hub != nil {
			h.tasks.Publish(h.hub)
		}
		h.tasks.OnRerun(h.taskCalls.support, h.taskCalls.rerun) // h.taskCalls is set below, before any request
	}
	for _, v := range h.versions {
		h.initial[v] = initializeResult(v, &o, capabilities(v, h.advertises, h.hub != nil))
	}
	h.discoverVersions = append(slices.Clone(h.modern), h.versions...)
	slices.SortFunc(h.discoverVersions, func(a, b string) int { return strings.Compare(b, a) })
	h.modernReplies = newModernReplies(&o, h.discoverVersions, capabilities(ModernVersion, h.advertises, h.hub != nil))
	h.functions = &functions.Server{Functions: srv.Functions, PageSize: o.PageSize, Cache: h.modernReplies.cache,
		WithServerInfo: h.modernReplies.withServerInfo, CheckArguments: h.checkArguments, Log: o.Logger}
	h.listeners = newListeners(h, &o)
	h.taskCalls = taskCalls{replies: &h.replies, modern: h.modernReplies, notifiers: h.notifiers, call: h.callTool,
		resolve: h.srv.resolve, admits: srv.AdmitsTasks}
	h.chain = h.buildChain(o.Middleware)
	return h
}

// advertises reports whether the endpoint serves what a capability of the
// method table advertises.
func (h *handler) advertises(capability string) bool {
	if capabilityValues[capability].always {
		return true
	}
	if capability == capTasks {
		return h.tasks != nil
	}
	return h.srv.Functions.Advertises(capability)
}

// initializeResult encodes the InitializeResult for version v with its
// capabilities object.
func initializeResult(v string, o *Options, caps string) []byte {
	r := struct {
		ProtocolVersion string          `json:"protocolVersion"`
		Capabilities    json.RawMessage `json:"capabilities"`
		ServerInfo      Implementation  `json:"serverInfo"`
		Instructions    string          `json:"instructions,omitempty"`
	}{v, json.RawMessage(caps), o.ServerInfo, o.Instructions}
	data, err := metadata.Marshal(r)
	if err != nil {
		panic(fmt.Sprintf("encoding initialize result: %v", err)) // plain strings: cannot fail
	}
	return data
}

// serve answers one HTTP request of the endpoint; origin is the legacy SSE
// stream it carries a message of, nil for a Streamable HTTP request.
func (h *handler) serve(w http.ResponseWriter, r *http.Request, origin *streamOrigin) {
	if r.Method == http.MethodGet {
		if last := r.Header.Get(headerLastEventID); last != "" {
			h.serveStream(w, r, StreamResume, last)
			return
		}
		if h.hub != nil && origin == nil {
			h.serveStream(w, r, StreamSession, "")
			return
		}
	}
	req := &request{h: h, r: r, origin: origin}
	if r.Method != http.MethodPost {
		w.Header()["Allow"] = allowPost
		h.refuseEarly(req, w, &earlyAnswer{status: http.StatusMethodNotAllowed, code: codeServerError, text: "Method not allowed"})
		return
	}
	sse, ok := wire.AcceptedFraming(r.Header[headerAccept])
	if !ok {
		h.refuseEarly(req, w, &earlyAnswer{status: http.StatusNotAcceptable, code: codeServerError,
			text: "Not Acceptable: Client must accept application/json or text/event-stream"})
		return
	}
	if r.ContentLength > h.maxBody {
		h.refuseEarly(req, w, tooLarge)
		return
	}

	buf := getBuffer()
	defer putBuffer(buf)
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, h.maxBody)); err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			h.refuseEarly(req, w, tooLarge)
			return
		}
		h.refuseEarly(req, w, &earlyAnswer{status: http.StatusBadRequest, code: codeServerError, text: "Bad Request: reading the body failed"})
		return
	}
	if wire.FirstByte(buf.Bytes()) == '[' {
		h.serveBatch(w, r, sse, buf.Bytes(), origin)
		return
	}
	h.serveMessage(w, r, sse, buf.Bytes(), origin, false)
}

// serveStream passes a GET stream through the chain: the dispatcher serves
// it (clientreq.Store.ServeResume, listen.Server.ServeSession) unless a
// link refuses it.
func (h *handler) serveStream(w http.ResponseWriter, r *http.Request, kind StreamKind, lastID string) {
	req := &request{h: h, r: r, stream: kind, lastID: lastID}
	req.out.ResponseWriter = w
	req.w = &req.out
	h.chain(req)
}

// refuseEarly passes a refusal decided before the chain through it: the
// links see it (and may answer otherwise), the dispatcher writes it.
func (h *handler) refuseEarly(req *request, w http.ResponseWriter, e *earlyAnswer) {
	req.early = e
	req.out.ResponseWriter = w
	req.w, req.id = &req.out, e.id
	h.chain(req)
}

// writeEarly writes the answer decided before the chain.
func (h *handler) writeEarly(req *request) {
	e := req.early
	switch {
	case e.held != nil:
		e.held.Replay(req.w)
	case e.status == http.StatusAccepted:
		req.w.WriteHeader(http.StatusAccepted)
	default:
		h.refuse(req.w, e.status, e.id, e.code, e.text, e.data)
	}
}

// tooLarge refuses a body over the endpoint's bound.
var tooLarge = &earlyAnswer{status: http.StatusRequestEntityTooLarge, code: codeServerError,
	text: "Request Entity Too Large: the body exceeds the limit"}

// serveMessage answers one JSON-RPC message: a request or a notification
// goes through the middleware chain; a response goes to the call waiting
// for it.
func (h *handler) serveMessage(w http.ResponseWriter, r *http.Request, sse bool, body []byte, origin *streamOrigin, batch bool) {
	req := &request{h: h, r: r, sse: sse, origin: origin, batch: batch}
	msg := &req.msg
	if code, text := decodeMessage(body, msg); code != 0 {
		h.refuseEarly(req, w, &earlyAnswer{status: http.StatusBadRequest, id: validID(msg.ID), code: code, text: text})
		return
	}
	if msg.Method == "" {
		if (msg.HasResult || msg.HasError) && msg.ID != nil {
			// A client's response to a request a call sent it.
			req.w, req.id = w, msg.ID
			h.response(req, msg, body)
			return
		}
		h.refuseEarly(req, w, &earlyAnswer{status: http.StatusBadRequest, id: validID(msg.ID), code: CodeInvalidRequest, text: "Invalid Request: missing method"})
		return
	}
	req.method = lookupMethod(msg.Method)
	if msg.ID != nil && validID(msg.ID) == nil {
		text := "Invalid Request: id must be a string or a number"
		if len(bytes.TrimSpace(msg.ID)) > MaxIDBytes {
			text = idTooLong
		}
		h.refuseEarly(req, w, &earlyAnswer{status: http.StatusBadRequest, code: CodeInvalidRequest, text: text})
		return
	}

	if msg.ParamsProblem != "" {
		if msg.ID == nil {
			// A notification: nothing to answer.
			h.refuseEarly(req, w, &earlyAnswer{status: http.StatusAccepted})
			return
		}
		h.refuseEarly(req, w, &earlyAnswer{status: http.StatusBadRequest, id: msg.ID, code: CodeInvalidParams, text: msg.ParamsProblem})
		return
	}
	if msg.Method == methodListen && len(body) > MaxListenRequestBytes {
		// Its stream would keep the body while it is open.
		h.refuseEarly(req, w, &earlyAnswer{status: http.StatusRequestEntityTooLarge, id: msg.ID, code: codeServerError,
			text: "Request Entity Too Large: a " + methodListen + " request is at most " + strconv.Itoa(MaxListenRequestBytes) + " bytes."})
		return
	}
	req.out.ResponseWriter = w
	req.w, req.id = &req.out, msg.ID
	h.chain(req)
}

// dispatch is the last link of the chain: it reads the revision (and for a
// legacy request the session), checks the request against its revision and
// runs its method's handler, or answers method-not-found.
func (h *handler) dispatch(req *request) {
	switch {
	case req.early != nil:
		h.writeEarly(req)
		return
	case req.stream == StreamResume:
		if s, ok := h.session(req); ok {
			h.streams.ServeResume(req.w, req.r, req.lastID, callScope(req, s), h.resumeGrace)
		}
		return
	case req.stream == StreamSession:
		if s, ok := h.session(req); ok {
			sse, _ := wire.AcceptedFraming(req.r.Header[headerAccept])
			h.listeners.ServeSession(req.w, req.r, h.sessions, listenSession(s), sse, req.Owner(), req.Caller().Address())
		}
		return
	}
	if h.serveModern(req) {
		return
	}
	msg, m := &req.msg, req.method
	if m != nil && m.beforeSession && msg.ID != nil {
		m.serve(h, req)
		return
	}
	s, version, ok := h.legacyState(req)
	if !ok {
		return
	}
	req.version, req.session = version, s
	req.scope = callScope(req, s)
	if msg.ID == nil {
		// Notifications (initialized, cancelled, …) need no answer.
		if msg.Method == methodCancelled {
			h.calls.Cancelled(msg.Params, req.scope)
		}
		req.w.WriteHeader(http.StatusAccepted)
		return
	}
	if m == nil || !m.Has(version) || !m.serve(h, req) {
		h.rpcError(req, CodeMethodNotFound, "Method '"+jsonx.SafeText(msg.Method)+"' is not available.", nil)
	}
}

// The handlers of the method table that live in this file.

func (h *handler) servePing(req *request) bool {
	h.result(req, []byte("{}"))
	return true
}

// serveSetLevel serves logging/setLevel (legacy revisions): the session's
// later calls send log messages at this level and above. Modern revisions
// carry the level in each request's _meta instead and do not have the
// method.
func (h *handler) serveSetLevel(req *request) bool {
	rank, problem := sessions.ParseLevel(req.msg.Params)
	if problem != "" {
		h.rpcError(req, CodeInvalidParams, problem, nil)
		return true
	}
	if vals := req.r.Header[headerSessionID]; len(vals) > 0 && vals[0] != "" {
		h.levels.Set(vals[0], rank)
	}
	h.result(req, []byte("{}"))
	return true
}

func (h *handler) serveDiscover(req *request) bool {
	h.result(req, h.modernReplies.discover)
	return true
}

// legacyState reads the session token and the revision of a legacy request;
// when ok is false the request has been refused.
func (h *handler) legacyState(req *request) (s *session, version string, ok bool) {
	if s, ok = h.session(req); !ok {
		return nil, "", false
	}
	var header string
	if vals := req.r.Header[headerProtocolVersion]; len(vals) > 0 {
		header = vals[0]
	}
	version, no := h.keeper.Version(header, s, defaultVersion)
	if no != nil {
		h.refuse(req.w, no.Status, validID(req.id), codeServerError, no.Message, no.Data)
		return nil, "", false
	}
	return s, version, true
}

// session opens the Mcp-Session-Id header for the request's owner; (nil,
// true) when there is none, false when it was refused.
func (h *handler) session(req *request) (*session, bool) {
	var token string
	if vals := req.r.Header[headerSessionID]; len(vals) > 0 {
		token = vals[0]
	}
	s, no := h.keeper.Open(token, sessionOwner(req.Caller()))
	if no != nil {
		h.refuse(req.w, no.Status, validID(req.id), codeServerError, no.Message, no.Data)
		return nil, false
	}
	return s, true
}

// serveInitialize answers initialize: the revision both sides speak, the
// capabilities and the server's info, and a sealed session for the
// client's later requests.
func (h *handler) serveInitialize(req *request) bool {
	params := req.msg.Params
	// Names are matched exactly, as every member of a message is.
	var p struct {
		ProtocolVersion string
		ClientInfo      *metadata.ClientInfo
		Capabilities    json.RawMessage
	}
	if len(params) > 0 && params[0] != 'n' {
		if params[0] != '{' {
			h.rpcError(req, CodeInvalidParams, "Invalid params: params must be an object.", nil)
			return true
		}
		if raw := member(params, "protocolVersion"); raw != nil && raw[0] != 'n' {
			var ok bool
			if p.ProtocolVersion, ok = stringValue(raw); !ok {
				h.rpcError(req, CodeInvalidParams, "Invalid params: 'protocolVersion' must be a string.", nil)
				return true
			}
		}
		if raw := member(params, "clientInfo"); raw != nil && raw[0] != 'n' {
			info, ok := wire.DecodeClientInfo(raw)
			if !ok {
				h.rpcError(req, CodeInvalidParams, "Invalid params: 'clientInfo' must be an object with string name and version.", nil)
				return true
			}
			p.ClientInfo = info
		}
		p.Capabilities = member(params, "capabilities")
	}
	v := LatestVersion
	if i := slices.Index(h.versions, p.ProtocolVersion); i >= 0 {
		v = h.versions[i]
	}
	result, ok := h.initial[v]
	if !ok { // LatestVersion missing from a modified SupportedVersions
		v = h.versions[len(h.versions)-1]
		result = h.initial[v]
	}
	token, err := h.keeper.Mint(v, p.ClientInfo, p.Capabilities, sessionOwner(req.Caller()))
	if err != nil {
		h.log.Error("mcp initialize: minting the session token failed", "error", err)
		h.rpcError(req, CodeInternalError, "Internal error", nil)
		return true
	}
	req.w.Header().Set(headerSessionID, token)
	h.result(req, result)
	return true
}

// serveToolsCall runs tools/call; meta is the envelope of a modern request, nil
// for a legacy one.
func (h *handler) serveToolsCall(req *request) bool {
	msg, version, s, meta := &req.msg, req.version, req.session, req.meta
	if pe := h.checkArguments(msg.Arguments); pe != nil {
		h.callError(req, pe, meta != nil)
		return true
	}
	name, args, rawArgs, problem := decodeCallParams(msg)
	if problem != "" {
		h.rpcError(req, CodeInvalidParams, problem, nil)
		return true
	}
	if name == "" {
		h.rpcError(req, CodeInvalidParams, "Invalid params: missing required parameter 'name'.", nil)
		return true
	}
	call := &CallRequest{
		Name:            name,
		Arguments:       args,
		RawArguments:    rawArgs,
		ProtocolVersion: version,
		Headers:         req.r.Header,
		Transport:       req.Transport(),
		Owner:           req.Owner(),
		Caller:          req.Caller(),
	}
	if meta != nil {
		call.Meta, call.ClientInfo = meta, meta.ClientInfo
	} else if vals := req.r.Header[headerSessionID]; len(vals) > 0 && call.Transport == metadata.TransportStreamableHTTP {
		call.SessionID = vals[0]
	}
	if s != nil {
		call.ClientInfo = s.Client
	}
	var in *inputState
	ident := callIdentity{Method: methodToolsCall, Name: name, Args: rawArgs, Owner: call.Owner}
	if meta != nil {
		var code int
		if in, code, problem = h.states.ReadInput(req.r.Context(), msg.Params, ident); problem != "" {
			h.rpcError(req, code, problem, nil)
			return true
		}
	}
	call.Tool = req.Target().Resolved
	var ts *metadata.TaskSupport
	if call.Tool != nil && h.tasks != nil {
		ts = call.Tool.Task
	}
	if ts != nil && meta != nil && req.method.Task {
		if clientHasTasks(meta.ClientCapabilities) {
			if l := h.taskCalls.launch(h.tasks, req, call, meta, in, ts); l != nil {
				h.writeCall(req, call, meta, ident, l.Result, l.Err)
			}
			return true
		}
		if ts.Support == metadata.TaskRequired {
			h.callError(req, &ProtocolError{Code: CodeMissingRequiredClientCapability,
				Message: "Missing required client capability: tool '" + jsonx.SafeText(name) + "' runs only as a task; declare the " +
					ExtensionTasks + " extension in _meta." + MetaClientCapabilities + ".extensions.",
				Data: tasksRequiredData}, true)
			return true
		}
	}
	if meta == nil && req.sse && s != nil && req.scope != "" && req.origin == nil && clientreq.Resumes(version) {
		h.callResumable(req, msg, s, call, ident)
		return true
	}
	call.Notify = h.notifier(req, msg, meta, s, in)
	h.finishCall(req, call, meta, ident)
	return true
}

// callResumable runs a call whose stream the client may resume (see
// resume.go): the call runs on a goroutine of its own, with its own
// context, and this request reads its stream until the result, until the
// stream is closed, or until the client leaves.
func (h *handler) callResumable(req *request, msg *message, s *session, call *CallRequest, ident callIdentity) {
	rs, post := h.streams.Open(req.w, h.instanceID, req.scope, call.Owner, h.resumeGrace)
	if rs == nil {
		// The store keeps as many streams as it may: a plain stream.
		call.Notify = h.notifier(req, msg, nil, s, nil)
		h.finishCall(req, call, nil, ident)
		return
	}
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(req.r.Context()))
	own := *req // outlives this request: nothing of its pooled body
	own.id = bytes.Clone(req.id)
	rs.SetCall(cancel, own.id)
	own.ctx = ctx
	own.w = clientreq.NewWriter(rs)
	call.Notify = h.notifier(&own, msg, nil, s, nil)
	if call.Notify == nil {
		call.Notify = clientreq.NewNotifier(h.notifiers, clientreq.NotifierOptions{Scope: own.scope, MinLevel: -1})
	}
	call.Notify.SetStream(rs)
	req.setOutcome("streamed")
	h.streamCalls.Go(func() {
		defer func() {
			if p := recover(); p != nil {
				h.log.Error("mcp tools/call failed", "tool", call.Name, "error", fmt.Sprintf("panic: %v", p))
			}
			cancel(nil)
			rs.Finish()
		}()
		h.finishCall(&own, call, nil, ident)
	})
	rs.Serve(req.r.Context(), post)
	select {
	case <-rs.Finished():
		// The call ended while this request served its stream (finish
		// runs after finishCall): the exchange ends as the call did, so
		// the middleware (the SERVER span) sees the call's outcome.
		req.outcome = own.outcome
	default:
	}
}

// finishCall runs a tools/call and writes its reply.
func (h *handler) finishCall(req *request, call *CallRequest, meta *RequestMeta, ident callIdentity) {
	res, err := clientreq.Run(&h.calls, callParent(req), req.scope, req.id, func(ctx context.Context) (*metadata.CallToolResult, error) {
		return h.callTool(ctx, call)
	})
	h.writeCall(req, call, meta, ident, res, err)
}

// writeCall answers a tools/call with what the tool returned.
func (h *handler) writeCall(req *request, call *CallRequest, meta *RequestMeta, ident callIdentity, res *metadata.CallToolResult, err error) {
	name := call.Name
	req.w = call.Notify.End(req.w) // no notification after this: the reply follows
	markLastEvent(req.w)
	if meta != nil && h.inputRequired(req, call.Notify, ident) {
		return
	}
	if err != nil {
		if pe, ok := errors.AsType[*ProtocolError](err); ok {
			h.callError(req, pe, meta != nil)
			return
		}
		h.log.Error("mcp tools/call failed", "tool", name, "error", err)
		h.rpcError(req, CodeInternalError, "Internal error", nil)
		return
	}
	if res == nil {
		h.log.Error("mcp tools/call failed", "tool", name, "error", "the tool returned no result")
		h.rpcError(req, CodeInternalError, "Internal error", nil)
		return
	}
	if res.IsError {
		req.setOutcome("isError")
	}

	head := ""
	if meta != nil {
		cp := *res
		cp.Meta = h.modernReplies.withServerInfo(res.Meta)
		res, head = &cp, h.modernReplies.callHead
	}
	buf := getBuffer()
	defer putBuffer(buf)
	beginReply(buf, req.sse, req.id)
	buf.WriteString(`,"result":`)
	out, err := res.AppendCheckedJSON(buf.AvailableBuffer(), head)
	if err != nil {
		h.log.Error("mcp tools/call failed", "tool", name, "error", err)
		h.rpcError(req, CodeInternalError, "Internal error", nil)
		return
	}
	buf.Write(out)
	endReply(buf, req.sse)
	h.send(req.w, http.StatusOK, req.sse, buf.Bytes())
}

// callError answers a call with the JSON-RPC error it failed with. On a
// modern revision a missing client capability (-32021) is refused with
// HTTP 400, as 2026-07-28 asks, unless the call's stream has started.
func (h *handler) callError(req *request, pe *ProtocolError, modern bool) {
	if _, streaming := req.w.(*streamTail); modern && !streaming && pe.Code == CodeMissingRequiredClientCapability {
		req.setOutcome("error " + strconv.Itoa(pe.Code))
		h.refuse(req.w, http.StatusBadRequest, req.id, pe.Code, pe.Message, pe.Data)
		return
	}
	h.rpcError(req, pe.Code, pe.Message, pe.Data)
}

// callTool runs the tool, turning a panic into an error.
func (h *handler) callTool(ctx context.Context, call *CallRequest) (res *metadata.CallToolResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			res, err = nil, fmt.Errorf("calling tool %q: panic: %v", call.Name, p)
		}
	}()
	return h.srv.CallTool(ctx, call)
}

// serveToolsList answers tools/list with the list a client of version sees;
// modern results also carry resultType, ttlMs, cacheScope and server info.
func (h *handler) serveToolsList(req *request) bool {
	version := req.version
	i := 0
	if IsModern(version) {
		i = 1
	}
	list, fresh, err := h.lists[i].Get(h.srv.ToolsList(version))
	if fresh && err != nil {
		h.log.Error("mcp tools/list: the tool list is not usable", "error", err, "protocolVersion", version)
	}
	if err != nil {
		h.rpcError(req, CodeInternalError, "Internal error", nil)
		return true
	}
	head := getBuffer()
	defer putBuffer(head)
	beginReply(head, req.sse, req.id)
	head.WriteString(`,"result":`)
	if IsModern(version) {
		head.Write(h.modernReplies.listHead)
	} else {
		head.WriteString(`{"tools":`)
	}
	tail := "}}"
	if req.sse {
		tail += eventEnd
	}
	h.sendParts(req.w, req.sse, head.Bytes(), list, tail)
	return true
}
