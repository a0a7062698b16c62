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
	"sync/atomic"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
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
	lifetime                time.Duration     // of a session token
	initial                 map[string][]byte // negotiated version → initialize result JSON

	modern           []string // snapshot of ModernVersions
	discoverVersions []string // every revision served, newest first
	modernReplies    *modernReplies

	lists  [2]atomic.Pointer[toolList] // the prepared tools/list arrays: legacy, modern
	last   atomic.Pointer[tokenHit]    // the last session token parsed
	levels *levelStore                 // logging/setLevel choices

	pageSize int // entries per page of the list methods of functions.go

	instanceID      string // names this instance in request ids
	forwardResponse func(ctx context.Context, instanceID, scope string, body []byte) error
	requestID       func(scope string, deadline time.Time) string
	waits           clientreq.Waits    // requests to clients waiting for their answer
	notifiers       *clientreq.Channel // what the calls' Notifiers share
	streams         clientreq.Store    // resumable streams
	resumeGrace     time.Duration
	tasks           *taskrun.Service            // nil when tasks are off
	taskCalls       taskCalls                   // what the calls of tasks need of the core
	checkArgs       func(json.RawMessage) error // Options.CheckArguments
	states          *clientreq.States           // request states: given, opened, spent

	hub                *notify.Hub      // nil when notifications are off
	sessions           *listen.Sessions // the legacy sessions' subscriptions
	shared             taskrun.Shared   // the tasks being written to listeners
	listenKeepAlive    time.Duration
	listenWriteTimeout time.Duration
}

// toolList is a ToolsList slice checked once and remembered by identity.
type toolList struct {
	src  []byte
	body []byte // src trimmed, compacted when it held line breaks
	err  error
}

type tokenHit struct {
	token   string
	s       *session
	expires time.Time // the token's expiry: past it, the token is opened again
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
		lifetime: o.SessionLifetime,
		srv:      srv,
		log:      o.Logger,
		replies:  replies{log: o.Logger},
		maxBody:  o.MaxBodyBytes,
		maxBatch: o.MaxBatchMessages, maxBatchReply: o.MaxBatchReplyBytes,
		versions: slices.Clone(SupportedVersions),
		initial:  make(map[string][]byte, len(SupportedVersions)),
		modern:   slices.Clone(ModernVersions),
		levels:   newLevelStore(DefaultMaxLogSessions),
		pageSize: o.PageSize,

		instanceID:      o.InstanceID,
		forwardResponse: o.ForwardResponse,
		requestID:       o.RequestID,
		resumeGrace:     o.ResumeGrace,
		checkArgs:       o.CheckArguments,
		streams:         clientreq.NewStore(o.ResumeStreams, o.ResumeBytes),
	}
	h.notifiers = &clientreq.Channel{Waits: &h.waits, NewRequestID: h.newRequestID, HasCapability: hasCapability}
	h.states = clientreq.NewStates(h.sealer, o.UsedInputStates, o.SpentStates, o.Logger)
	if o.ListenKeepAlive <= 0 {
		o.ListenKeepAlive = DefaultListenKeepAlive
	}
	if o.ListenWriteTimeout <= 0 {
		o.ListenWriteTimeout = DefaultListenWriteTimeout
	}
	h.listenKeepAlive, h.listenWriteTimeout = o.ListenKeepAlive, o.ListenWriteTimeout
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
	return functionCapability(h.srv.Functions, capability)
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
	sse, ok := acceptedFraming(r.Header[headerAccept])
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
// it (serveResume, serveSessionStream) unless a link refuses it.
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
		e.held.replay(req.w)
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
		h.serveResume(req.w, req.r, req.lastID)
		return
	case req.stream == StreamSession:
		h.serveSessionStream(req.w, req.r)
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
			h.cancelled(msg.Params, req.scope)
		}
		req.w.WriteHeader(http.StatusAccepted)
		return
	}
	if m == nil || !m.Has(version) || !m.serve(h, req) {
		h.rpcError(req, CodeMethodNotFound, "Method '"+jsonx.SafeText(msg.Method)+"' is not available.", nil)
	}
}

// The handlers of the method table that live in this file.

func (h *handler) serveInitialize(req *request) bool {
	h.initialize(req, req.msg.Params)
	return true
}

func (h *handler) servePing(req *request) bool {
	h.result(req, []byte("{}"))
	return true
}

func (h *handler) serveSetLevel(req *request) bool {
	h.setLevel(req, req.msg.Params)
	return true
}

func (h *handler) serveDiscover(req *request) bool {
	h.result(req, h.modernReplies.discover)
	return true
}

func (h *handler) serveToolsList(req *request) bool {
	h.toolsList(req, req.version)
	return true
}

func (h *handler) serveToolsCall(req *request) bool {
	h.toolsCall(req, &req.msg, req.version, req.session, req.meta)
	return true
}

// legacyState reads the session token and the revision of a legacy request;
// when ok is false the request has been refused.
func (h *handler) legacyState(req *request) (s *session, version string, ok bool) {
	if s, ok = h.session(req); !ok {
		return nil, "", false
	}
	version, ok = h.protocolVersion(req, s)
	return s, version, ok
}

// session parses the Mcp-Session-Id header; (nil, true) when there is none.
func (h *handler) session(req *request) (*session, bool) {
	vals := req.r.Header[headerSessionID]
	if len(vals) == 0 || vals[0] == "" {
		return nil, true
	}
	token := vals[0]
	if hit := h.last.Load(); hit != nil && hit.token == token && time.Now().Before(hit.expires) {
		return h.ownSession(req, hit.s)
	}
	s, exp, err := sessions.Open(h.sealer, token, h.versions)
	if errors.Is(err, sessions.ErrExpiredToken) {
		// 404 tells a client that its session ended: it initializes again.
		h.refuse(req.w, http.StatusNotFound, validID(req.id), codeServerError, "Session expired: initialize again.", nil)
		return nil, false
	}
	if err != nil {
		h.refuse(req.w, http.StatusBadRequest, validID(req.id), codeServerError, "Invalid client state.", nil)
		return nil, false
	}
	h.last.Store(&tokenHit{token: token, s: s, expires: exp})
	return h.ownSession(req, s)
}

// ownSession refuses a session minted for another owner (another
// principal behind the access token check, or none) exactly as a session
// id that does not open: its holder learns nothing of it.
func (h *handler) ownSession(req *request, s *session) (*session, bool) {
	if s.Owner != sessionOwner(req.Caller()) {
		h.refuse(req.w, http.StatusBadRequest, validID(req.id), codeServerError, "Invalid client state.", nil)
		return nil, false
	}
	return s, true
}

// protocolVersion picks the revision of a request: the header, else the
// session's, else the default of the transport.
func (h *handler) protocolVersion(req *request, s *session) (string, bool) {
	if vals := req.r.Header[headerProtocolVersion]; len(vals) > 0 && vals[0] != "" {
		if i := slices.Index(h.versions, vals[0]); i >= 0 {
			return h.versions[i], true
		}
		data := struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}{h.versions, vals[0]}
		h.refuse(req.w, http.StatusBadRequest, validID(req.id), codeServerError, "Unsupported protocol version", data)
		return "", false
	}
	if s != nil {
		return s.Version, true
	}
	return defaultVersion, true
}

func (h *handler) initialize(req *request, params json.RawMessage) {
	// Names are matched exactly, as every member of a message is.
	var p struct {
		ProtocolVersion string
		ClientInfo      *metadata.ClientInfo
		Capabilities    json.RawMessage
	}
	if len(params) > 0 && params[0] != 'n' {
		if params[0] != '{' {
			h.rpcError(req, CodeInvalidParams, "Invalid params: params must be an object.", nil)
			return
		}
		if raw := member(params, "protocolVersion"); raw != nil && raw[0] != 'n' {
			var ok bool
			if p.ProtocolVersion, ok = stringValue(raw); !ok {
				h.rpcError(req, CodeInvalidParams, "Invalid params: 'protocolVersion' must be a string.", nil)
				return
			}
		}
		if raw := member(params, "clientInfo"); raw != nil && raw[0] != 'n' {
			info, ok := wire.DecodeClientInfo(raw)
			if !ok {
				h.rpcError(req, CodeInvalidParams, "Invalid params: 'clientInfo' must be an object with string name and version.", nil)
				return
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
	token, err := sessions.Mint(h.sealer, h.lifetime, v, p.ClientInfo, p.Capabilities, sessionOwner(req.Caller()))
	if err != nil {
		h.log.Error("mcp initialize: minting the session token failed", "error", err)
		h.rpcError(req, CodeInternalError, "Internal error", nil)
		return
	}
	req.w.Header().Set(headerSessionID, token)
	h.result(req, result)
}

// toolsCall runs tools/call; meta is the envelope of a modern request, nil
// for a legacy one.
func (h *handler) toolsCall(req *request, msg *message, version string, s *session, meta *RequestMeta) {
	if pe := h.checkArguments(msg.Arguments); pe != nil {
		h.callError(req, pe, meta != nil)
		return
	}
	name, args, rawArgs, problem := decodeCallParams(msg)
	if problem != "" {
		h.rpcError(req, CodeInvalidParams, problem, nil)
		return
	}
	if name == "" {
		h.rpcError(req, CodeInvalidParams, "Invalid params: missing required parameter 'name'.", nil)
		return
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
	ident := callIdentity{method: methodToolsCall, name: name, args: rawArgs, owner: call.Owner}
	if meta != nil {
		var code int
		if in, code, problem = h.readInput(req.r.Context(), msg.Params, ident); problem != "" {
			h.rpcError(req, code, problem, nil)
			return
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
			return
		}
		if ts.Support == metadata.TaskRequired {
			h.callError(req, &ProtocolError{Code: CodeMissingRequiredClientCapability,
				Message: "Missing required client capability: tool '" + jsonx.SafeText(name) + "' runs only as a task; declare the " +
					ExtensionTasks + " extension in _meta." + MetaClientCapabilities + ".extensions.",
				Data: tasksRequiredData}, true)
			return
		}
	}
	if h.resumableCall(req, meta, version, s) {
		h.callResumable(req, msg, s, call, ident)
		return
	}
	call.Notify = h.notifier(req, msg, meta, s, in)
	h.finishCall(req, call, meta, ident)
}

// callResumable runs a call whose stream the client may resume (see
// resume.go): the call runs on a goroutine of its own, with its own
// context, and this request reads its stream until the result, until the
// stream is closed, or until the client leaves.
func (h *handler) callResumable(req *request, msg *message, s *session, call *CallRequest, ident callIdentity) {
	rs, post := h.openResumable(req.w, req.scope, call.Owner)
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
	go func() {
		defer func() {
			if p := recover(); p != nil {
				h.log.Error("mcp tools/call failed", "tool", call.Name, "error", fmt.Sprintf("panic: %v", p))
			}
			cancel(nil)
			rs.Finish()
		}()
		h.finishCall(&own, call, nil, ident)
	}()
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
	res, err := h.callCancellable(req, call)
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

// toolsList answers tools/list with the list a client of version sees;
// modern results also carry resultType, ttlMs, cacheScope and server info.
func (h *handler) toolsList(req *request, version string) {
	list, err := h.toolList(version)
	if err != nil {
		h.rpcError(req, CodeInternalError, "Internal error", nil)
		return
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
}

// toolList returns the prepared tool list of a revision, checking a new
// slice once.
func (h *handler) toolList(version string) ([]byte, error) {
	raw := h.srv.ToolsList(version)
	slot := &h.lists[0]
	if IsModern(version) {
		slot = &h.lists[1]
	}
	if c := slot.Load(); c != nil && sameSlice(c.src, raw) {
		return c.body, c.err
	}
	c := &toolList{src: raw}
	c.body, c.err = prepareList(raw)
	if c.err != nil {
		h.log.Error("mcp tools/list: the tool list is not usable", "error", c.err, "protocolVersion", version)
	}
	slot.Store(c)
	return c.body, c.err
}

func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// prepareList checks that raw is a JSON array and returns it as it will be
// spliced: trimmed, and compacted only when it has line breaks (which SSE
// data lines cannot carry).
func prepareList(raw []byte) ([]byte, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return []byte("[]"), nil
	}
	if trimmed[0] != '[' || !json.Valid(trimmed) {
		return nil, errors.New("checking the tool list: not a JSON array")
	}
	if bytes.ContainsAny(trimmed, "\r\n") {
		var b bytes.Buffer
		if err := json.Compact(&b, trimmed); err != nil {
			return nil, fmt.Errorf("compacting the tool list: %w", err)
		}
		return b.Bytes(), nil
	}
	return trimmed, nil
}

// acceptedFraming reads Accept: sse when text/event-stream is listed, ok
// when it or application/json (or a wildcard covering it) is.
func acceptedFraming(vals []string) (sse, ok bool) {
	var plain bool
	for _, v := range vals {
		for v != "" {
			var part string
			part, v, _ = strings.Cut(v, ",")
			mt, _, _ := strings.Cut(part, ";")
			mt = strings.TrimSpace(mt)
			switch {
			case strings.EqualFold(mt, "text/event-stream"):
				sse = true
			case strings.EqualFold(mt, "application/json"), mt == "*/*", strings.EqualFold(mt, "application/*"):
				plain = true
			}
		}
	}
	return sse, sse || plain
}

// heldReply is an answer written aside, to be replayed once the chain
// lets it through (a batch's session refused whole).
type heldReply struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *heldReply) Header() http.Header { return r.header }
func (r *heldReply) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}
func (r *heldReply) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.body.Write(p)
}

// replay writes the held answer to w.
func (r *heldReply) replay(w http.ResponseWriter) {
	hdr := w.Header()
	for k, v := range r.header {
		hdr[k] = v
	}
	w.WriteHeader(r.status)
	_, _ = w.Write(r.body.Bytes())
}
