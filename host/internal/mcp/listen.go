package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	"github.com/funcmcp/funcmcp/host/internal/mcp/listen"
	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/internal/jsonx"
)

// Notifications that reach the client (see notify): on 2026-07-28 a
// subscriptions/listen stream carries what its filter asked for; before
// it, the session's GET stream and the legacy SSE stream carry the
// list_changed notifications and the updates of the resources the client
// subscribed to with resources/subscribe.
//
// Every stream is a listener of the handler's hub: the hub queues each
// change on the listeners that asked for it (bounded) and wakes them; the
// stream's own request goroutine writes what waits and sleeps otherwise.
// Keep-alives come from a timer, not a goroutine.

// The listen streams and the sessions' subscriptions live in package
// listen; these names keep the package's spelling of its settings.
const (
	MetaSubscriptionID        = listen.MetaSubscriptionID
	DefaultListenKeepAlive    = listen.DefaultListenKeepAlive
	DefaultListenWriteTimeout = listen.DefaultListenWriteTimeout
	MaxListenRequestBytes     = listen.MaxListenRequestBytes
	DefaultSubscriptionGrace  = listen.DefaultSubscriptionGrace
	SettingSubscribedSessions = listen.SettingSubscribedSessions
)

// Default bounds of the sessions' subscriptions (see package listen).
var (
	DefaultSubscribedSessions = listen.DefaultSubscribedSessions
	DefaultSubscriptionBytes  = listen.DefaultSubscriptionBytes
)

// renderChange writes the notification of a change (see
// listen.RenderChange).
func renderChange(c notify.Change, subID []byte) []byte { return listen.RenderChange(c, subID) }

// taskNotice is the task a notifications/tasks carries: the change's,
// or, for a task that finished or waits for input, the record as
// tasks/get reads it (its result, error or input requests inlined),
// shared with every listener writing it at the same time; release gives
// it back once written.
func (h *handler) taskNotice(ctx context.Context, c notify.Change, scope string) (task []byte, release func()) {
	status := tasks.Status(paramString(c.Task, "status"))
	if h.tasks == nil || scope == "" || !(status.Terminal() || status == tasks.StatusInputRequired) {
		return c.Task, func() {}
	}
	t, err := h.tasks.Get(ctx, scope, c.TaskID)
	if err != nil {
		return c.Task, func() {}
	}
	return h.shared.Acquire(t)
}

// listFilter is what a legacy stream hears of the lists: those whose
// capability the endpoint advertises.
func (h *handler) listFilter() notify.Filter {
	return notify.Filter{ToolsListChanged: true, PromptsListChanged: h.advertises(capPrompts),
		ResourcesListChanged: h.advertises(capResources)}
}

// newSSEWriter makes the writer of a listening stream.
func (h *handler) newSSEWriter(w http.ResponseWriter) *sseWriter {
	return wire.NewSSEWriter(w, h.listenWriteTimeout)
}

// listenRefusal answers a listener the hub refused.
func (h *handler) listenRefusal(req *request, err error) {
	var be *owner.BudgetError
	var se *notify.TooManySubscriptionsError
	switch {
	case errors.As(err, &be), errors.As(err, &se):
		h.rpcError(req, codeServerError, "Too many listeners: "+err.Error()+".", nil)
	case errors.Is(err, notify.ErrClosed):
		h.rpcError(req, codeServerError, "The server is stopping: listen again later.", nil)
	default:
		h.log.Error("mcp: opening a listener failed", "error", err)
		h.rpcError(req, CodeInternalError, "Internal error", nil)
	}
}

// listenParams is what a subscriptions/listen asks for.
type listenParams struct {
	tools, prompts, resources *bool // nil when not asked
	uris                      []string
	hasURIs                   bool
	taskIDs                   []string
	hasTasks                  bool
}

// readListenParams reads params.notifications; problem is the -32602
// message.
func readListenParams(params []byte) (p listenParams, problem string) {
	n := member(params, "notifications")
	if n == nil || n[0] != '{' {
		return p, "Invalid params: notifications must be an object."
	}
	it := members(n)
	for key, val, ok := it.Next(); ok; key, val, ok = it.Next() {
		var dst **bool
		switch {
		case keyIs(key, "toolsListChanged"):
			dst = &p.tools
		case keyIs(key, "promptsListChanged"):
			dst = &p.prompts
		case keyIs(key, "resourcesListChanged"):
			dst = &p.resources
		case keyIs(key, "resourceSubscriptions"), keyIs(key, "taskIds"):
			list, ok := stringList(val)
			if !ok {
				return p, "Invalid params: notifications." + string(bytes.Trim(key, `"`)) + " must be an array of non-empty strings of at most " +
					strconv.Itoa(notify.MaxURI) + " bytes."
			}
			if keyIs(key, "taskIds") {
				p.taskIDs, p.hasTasks = list, true
			} else {
				p.uris, p.hasURIs = list, true
			}
			continue
		default:
			continue // a notification type this server does not know: not honoured
		}
		switch val[0] {
		case 't', 'f':
			v := val[0] == 't'
			*dst = &v
		case 'n':
		default:
			return p, "Invalid params: notifications." + string(bytes.Trim(key, `"`)) + " must be a boolean."
		}
	}
	return p, ""
}

// stringList reads a JSON array of strings (each 1 to notify.MaxURI
// bytes), without duplicates; null reads as none.
func stringList(val []byte) ([]string, bool) {
	if val[0] == 'n' {
		return nil, true
	}
	var list []string
	if val[0] != '[' || json.Unmarshal(val, &list) != nil {
		return nil, false
	}
	seen := make(map[string]bool, len(list))
	out := list[:0]
	for _, s := range list {
		if s == "" || len(s) > notify.MaxURI {
			return nil, false
		}
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out, true
}

// serveListen answers subscriptions/listen (2026-07-28): an SSE stream
// whose first message acknowledges what is honoured, then the
// notifications asked for, each tagged with the listen request's id,
// until the client closes it (which ends the subscription) or the server
// ends it gracefully (a "complete" result) or because the client fell
// behind (a JSON-RPC error).
func (h *handler) serveListen(req *request) bool {
	if h.hub == nil {
		return false
	}
	p, problem := readListenParams(req.msg.Params)
	if problem != "" {
		h.rpcError(req, CodeInvalidParams, problem, nil)
		return true
	}
	if len(p.taskIDs) > 0 && !clientHasTasks(req.meta.ClientCapabilities) {
		req.setOutcome("error " + strconv.Itoa(CodeMissingRequiredClientCapability))
		h.refuse(req.w, http.StatusBadRequest, validID(req.id), CodeMissingRequiredClientCapability,
			"Missing required client capability: taskIds needs the "+ExtensionTasks+" extension in _meta."+
				MetaClientCapabilities+".extensions.", tasksRequiredData)
		return true
	}
	if req.origin != nil || req.batch {
		h.rpcError(req, CodeInvalidRequest, "Invalid Request: subscriptions/listen needs a Streamable HTTP request of its own.", nil)
		return true
	}
	if !req.sse {
		req.setOutcome("refused 406")
		h.refuse(req.w, http.StatusNotAcceptable, validID(req.id), codeServerError,
			"Not Acceptable: subscriptions/listen answers with an event stream; accept text/event-stream.", nil)
		return true
	}

	// What is honoured: what was asked and this endpoint serves.
	var f notify.Filter
	resources := h.advertises(capResources)
	uris, taskIDs := p.hasURIs && resources, p.hasTasks && h.tasks != nil
	f.ToolsListChanged = p.tools != nil && *p.tools
	f.PromptsListChanged = p.prompts != nil && *p.prompts && h.advertises(capPrompts)
	f.ResourcesListChanged = p.resources != nil && *p.resources && resources
	if uris {
		f.Resources = p.uris
	}
	if taskIDs {
		f.Tasks = p.taskIDs
	}

	scope := taskScope(req.Owner())
	ls := listen.NewStream(bytes.Clone(validID(req.id)), scope, h.taskNotice)
	l, err := h.hub.Listen(notify.ListenerOptions{Owner: req.Owner(), Address: req.Caller().Address(),
		Held: listen.StreamCost + listen.RequestHeld(req.r), TaskOwner: scope, Wake: ls.Signal}, f)
	if err != nil {
		h.listenRefusal(req, err)
		return true
	}
	ls.Listen(l)
	defer l.End(nil)
	ctx, cancel := context.WithCancel(req.r.Context())
	defer cancel()

	req.setOutcome("streamed")
	hdr := req.w.Header()
	setFraming(hdr, true)
	req.w.WriteHeader(http.StatusOK)
	subID := bytes.Clone(validID(req.id))
	ls.Open(h.newSSEWriter(req.w))
	if ls.Out().Event(eventMessage, listen.Acknowledgement(f, uris, taskIDs, subID)) != nil {
		return true
	}
	stop := ls.Out().KeepAlive(h.listenKeepAlive, cancel)
	defer stop()
	// The tasks named start with their state now: a change made before
	// the stream opened is not lost.
	for _, id := range f.Tasks {
		t, err := h.tasks.Get(ctx, scope, id)
		if err != nil {
			continue
		}
		task, release := h.shared.Acquire(t)
		err = ls.WriteTask(task)
		release()
		if err != nil {
			return true
		}
	}
	why := ls.Run(ctx)
	switch {
	case errors.Is(why, notify.ErrClosed):
		var b bytes.Buffer
		beginReply(&b, false, subID)
		b.WriteString(`,"result":{"resultType":"complete","_meta":{"` + MetaSubscriptionID + `":`)
		b.Write(subID)
		b.WriteByte(',')
		b.Write(h.modernReplies.serverInfoMeta)
		b.WriteString("}}}")
		_ = ls.Out().Event(eventMessage, b.Bytes())
	case errors.Is(why, notify.ErrTooSlow):
		var b bytes.Buffer
		beginReply(&b, false, subID)
		h.appendError(&b, codeServerError, "Listener too slow: "+why.Error()+"; the subscription ended. Listen again, and read again what may have changed.", nil)
		b.WriteByte('}')
		_ = ls.Out().Event(eventMessage, b.Bytes())
	}
	return true
}

// serveSessionStream serves GET on the endpoint with a session (2025-03-26
// to 2025-11-25): the session's stream of list_changed notifications and
// updates of the resources it subscribed to. One stream per session: a
// second one replaces the first.
func (h *handler) serveSessionStream(w http.ResponseWriter, r *http.Request) {
	req := &request{h: h, r: r, w: w}
	s, ok := h.session(req)
	if !ok {
		return
	}
	if s == nil {
		w.Header()["Allow"] = allowPost
		h.refuse(w, http.StatusMethodNotAllowed, nil, codeServerError, "Method not allowed", nil)
		return
	}
	if sse, _ := wire.AcceptedFraming(r.Header[headerAccept]); !sse {
		h.refuse(w, http.StatusNotAcceptable, nil, codeServerError,
			"Not Acceptable: the session's stream is an event stream; accept text/event-stream.", nil)
		return
	}
	ls := listen.NewStream(nil, "", h.taskNotice)
	l, err := h.sessions.Attach(listen.Session{ID: s.ID, Expires: s.Expires}, notify.ListenerOptions{Owner: req.Owner(), Address: req.Caller().Address(), Held: listen.StreamCost, Wake: ls.Signal},
		h.listFilter())
	if err != nil {
		var le *owner.LimitError
		var be *owner.BudgetError
		switch {
		case errors.Is(err, notify.ErrClosed):
			h.refuse(w, http.StatusServiceUnavailable, nil, codeServerError, "Service Unavailable: the server is stopping.", nil)
		case errors.As(err, &le) && !le.Global, errors.As(err, &be) && be.Scope != owner.ScopeGlobal:
			h.refuse(w, http.StatusTooManyRequests, nil, codeServerError, "Too many listeners: "+err.Error()+".", nil)
		default:
			h.refuse(w, http.StatusServiceUnavailable, nil, codeServerError, "Too many listeners: "+err.Error()+".", nil)
		}
		return
	}
	ls.Listen(l)
	defer h.sessions.Detach(s.ID, l)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	setFraming(w.Header(), true)
	w.WriteHeader(http.StatusOK)
	ls.Open(h.newSSEWriter(w))
	if ls.Out().Flush() != nil {
		return
	}
	stop := ls.Out().KeepAlive(h.listenKeepAlive, cancel)
	defer stop()
	_ = ls.Run(ctx)
}

// serveSubscribe answers resources/subscribe and resources/unsubscribe
// (before 2026-07-28): the URI joins (or leaves) what the client's stream
// hears: its legacy SSE stream, else its session's GET stream.
func (h *handler) serveSubscribe(req *request) bool {
	if h.hub == nil || !h.advertises(capResources) {
		return false
	}
	uri, ok := stringValue(member(req.msg.Params, "uri"))
	if !ok || uri == "" || len(uri) > notify.MaxURI {
		h.rpcError(req, CodeInvalidParams, "Invalid params: uri must be a non-empty string of at most "+strconv.Itoa(notify.MaxURI)+" bytes.", nil)
		return true
	}
	subscribe := req.msg.Method == methodSubscribe
	var err error
	switch {
	case req.origin != nil && req.origin.Listener != nil:
		if subscribe {
			err = req.origin.Listener.Subscribe(uri)
		} else {
			req.origin.Listener.Unsubscribe(uri)
		}
	case req.session != nil:
		if subscribe {
			err = h.sessions.Subscribe(listen.Session{ID: req.session.ID, Expires: req.session.Expires}, req.Owner(), req.Caller().Address(), uri)
		} else {
			h.sessions.Unsubscribe(req.session.ID, uri)
		}
	default:
		h.rpcError(req, CodeInvalidRequest, "Invalid Request: "+jsonx.SafeText(req.msg.Method)+
			" needs a session (initialize first) or a legacy SSE stream to deliver the updates on.", nil)
		return true
	}
	if err != nil {
		h.rpcError(req, codeServerError, "Too many subscriptions: "+err.Error()+".", nil)
		return true
	}
	h.result(req, []byte("{}"))
	return true
}
