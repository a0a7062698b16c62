package listen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// Serving the streams: every stream is a listener of the endpoint's hub;
// the hub queues each change on the listeners that asked for it (bounded)
// and wakes them; the stream's own request goroutine writes what waits and
// sleeps otherwise. Keep-alives come from a timer, not a goroutine.

// Server serves the notification streams of an endpoint: its
// subscriptions/listen streams and its legacy sessions' GET streams. The
// endpoint fills it once; what it serves may change (Offer) and is read at
// each request.
type Server struct {
	// KeepAlive is the interval of the keep-alive comments of an idle
	// stream; WriteTimeout bounds one write to it.
	KeepAlive, WriteTimeout time.Duration
	// Log reports a listener the hub failed to open for a reason other
	// than its bounds.
	Log *slog.Logger
	// Offer tells what the endpoint serves now.
	Offer func() Offer
	// ReadTask reads the task id of scope as tasks/get gives it (its
	// result, error or input requests inlined), shared with every listener
	// writing it at the same time; release gives it back once written. It
	// fails when there is no such task (or tasks are off).
	ReadTask func(ctx context.Context, scope, id string) (task []byte, release func(), err error)
	// ServerInfo is the server-info member the result that ends a listen
	// stream carries in its _meta.
	ServerInfo []byte
	// TasksRequired is the data of the refusal of taskIds asked without
	// the tasks extension.
	TasksRequired json.RawMessage
}

// Offer is what the endpoint serves of what a stream may carry.
type Offer struct {
	Prompts, Resources bool // it advertises prompts, resources
	Tasks              bool // it runs tasks
}

// Lists is what a legacy stream hears of the lists: those whose
// capability the endpoint advertises.
func (o Offer) Lists() notify.Filter {
	return notify.Filter{ToolsListChanged: true, PromptsListChanged: o.Prompts, ResourcesListChanged: o.Resources}
}

// Refusal is the answer to a request refused before its stream opened: a
// JSON-RPC error (Status 0, answered as the request asked), or an HTTP
// status with the error as a plain JSON body. Outcome, when set, is how
// the exchange ended.
type Refusal struct {
	Status  int
	Code    int
	Message string
	Data    any
	Outcome string
}

// taskNotice is the task a notifications/tasks carries: the change's,
// or, for a task that finished or waits for input, the record as
// tasks/get reads it (ReadTask); release gives it back once written.
func (sv *Server) taskNotice(ctx context.Context, c notify.Change, scope string) (task []byte, release func()) {
	status := tasks.Status(wire.ParamString(c.Task, "status"))
	if sv.ReadTask == nil || scope == "" || !(status.Terminal() || status == tasks.StatusInputRequired) {
		return c.Task, func() {}
	}
	task, release, err := sv.ReadTask(ctx, scope, c.TaskID)
	if err != nil {
		return c.Task, func() {}
	}
	return task, release
}

// refusal answers a listener the hub refused.
func (sv *Server) refusal(err error) *Refusal {
	var be *owner.BudgetError
	var se *notify.TooManySubscriptionsError
	switch {
	case errors.As(err, &be), errors.As(err, &se):
		return &Refusal{Code: jsonrpc.CodeServerError, Message: "Too many listeners: " + err.Error() + "."}
	case errors.Is(err, notify.ErrClosed):
		return &Refusal{Code: jsonrpc.CodeServerError, Message: "The server is stopping: listen again later."}
	default:
		sv.Log.Error("mcp: opening a listener failed", "error", err)
		return &Refusal{Code: jsonrpc.CodeInternalError, Message: "Internal error"}
	}
}

// Request is a subscriptions/listen request as its stream needs it.
type Request struct {
	ID     []byte        // its id (JSON), a valid one
	Params []byte        // its params
	HTTP   *http.Request // its context ends the stream; its body is held
	// Owner and Address are whom the listener is counted for.
	Owner, Address owner.ID
	// Scope is the task scope of its owner: the tasks it may read.
	Scope string
	// TasksDeclared: the client declared the tasks extension.
	TasksDeclared bool
	// Alone: a Streamable HTTP request of its own (not an element of a
	// batch, not a message of a legacy SSE stream).
	Alone bool
	// SSE: the client accepts an event stream.
	SSE bool
}

// Listen serves a subscriptions/listen request (2026-07-28) on w, its
// listener one of hub: an SSE stream whose first message acknowledges what
// is honoured, then the notifications asked for, each tagged with the
// listen request's id, until the client closes it (which ends the
// subscription) or the server ends it gracefully (a "complete" result) or
// because the client fell behind (a JSON-RPC error). It returns the
// refusal to answer when the stream did not open, nil once it was served.
func (sv *Server) Listen(w http.ResponseWriter, hub *notify.Hub, req Request) *Refusal {
	p, problem := readParams(req.Params)
	if problem != "" {
		return &Refusal{Code: jsonrpc.CodeInvalidParams, Message: problem}
	}
	if len(p.taskIDs) > 0 && !req.TasksDeclared {
		code := metadata.CodeMissingRequiredClientCapability
		return &Refusal{Status: http.StatusBadRequest, Code: code, Outcome: "error " + strconv.Itoa(code),
			Message: "Missing required client capability: taskIds needs the " + metadata.ExtensionTasks + " extension in _meta." +
				wire.MetaClientCapabilities + ".extensions.", Data: sv.TasksRequired}
	}
	if !req.Alone {
		return &Refusal{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: subscriptions/listen needs a Streamable HTTP request of its own."}
	}
	if !req.SSE {
		return &Refusal{Status: http.StatusNotAcceptable, Code: jsonrpc.CodeServerError, Outcome: "refused 406",
			Message: "Not Acceptable: subscriptions/listen answers with an event stream; accept text/event-stream."}
	}

	// What is honoured: what was asked and this endpoint serves.
	var f notify.Filter
	offer := sv.Offer()
	uris, taskIDs := p.hasURIs && offer.Resources, p.hasTasks && offer.Tasks
	f.ToolsListChanged = p.tools != nil && *p.tools
	f.PromptsListChanged = p.prompts != nil && *p.prompts && offer.Prompts
	f.ResourcesListChanged = p.resources != nil && *p.resources && offer.Resources
	if uris {
		f.Resources = p.uris
	}
	if taskIDs {
		f.Tasks = p.taskIDs
	}

	ls := NewStream(bytes.Clone(req.ID), req.Scope, sv.taskNotice)
	l, err := hub.Listen(notify.ListenerOptions{Owner: req.Owner, Address: req.Address,
		Held: StreamCost + RequestHeld(req.HTTP), TaskOwner: req.Scope, Wake: ls.Signal}, f)
	if err != nil {
		return sv.refusal(err)
	}
	ls.Listen(l)
	defer l.End(nil)
	ctx, cancel := context.WithCancel(req.HTTP.Context())
	defer cancel()

	wire.SetFraming(w.Header(), true)
	w.WriteHeader(http.StatusOK)
	subID := bytes.Clone(req.ID)
	ls.Open(wire.NewSSEWriter(w, sv.WriteTimeout))
	if ls.Out().Event(wire.EventMessage, Acknowledgement(f, uris, taskIDs, subID)) != nil {
		return nil
	}
	stop := ls.Out().KeepAlive(sv.KeepAlive, cancel)
	defer stop()
	// The tasks named start with their state now: a change made before
	// the stream opened is not lost.
	for _, id := range f.Tasks {
		task, release, err := sv.ReadTask(ctx, req.Scope, id)
		if err != nil {
			continue
		}
		err = ls.WriteTask(task)
		release()
		if err != nil {
			return nil
		}
	}
	why := ls.Run(ctx)
	var b bytes.Buffer
	switch {
	case errors.Is(why, notify.ErrClosed):
		b.Write(jsonrpc.AppendResponseStart(b.AvailableBuffer(), subID))
		b.WriteString(`,"result":{"resultType":"complete","_meta":{"` + MetaSubscriptionID + `":`)
		b.Write(subID)
		b.WriteByte(',')
		b.Write(sv.ServerInfo)
		b.WriteString("}}}")
	case errors.Is(why, notify.ErrTooSlow):
		b.Write(jsonrpc.AppendResponseStart(b.AvailableBuffer(), subID))
		member, _ := jsonrpc.AppendErrorMember(b.AvailableBuffer(), jsonrpc.CodeServerError,
			"Listener too slow: "+why.Error()+"; the subscription ended. Listen again, and read again what may have changed.", nil)
		b.Write(member)
		b.WriteByte('}')
	default:
		return nil
	}
	_ = ls.Out().Event(wire.EventMessage, b.Bytes())
	return nil
}

// allowPost is the Allow header of a GET refused for want of a session.
var allowPost = []string{http.MethodPost}

// ServeSession serves a legacy session's GET (2025-03-26 to 2025-11-25)
// on w: the session's stream of list_changed notifications and updates of
// the resources it subscribed to (kept in t), its listener counted for
// who from addr. One stream per session: a second one replaces the first.
// s is nil when the request named no session; sse says that the client
// accepts an event stream.
func (sv *Server) ServeSession(w http.ResponseWriter, r *http.Request, t *Sessions, s *Session, sse bool, who, addr owner.ID) {
	if s == nil {
		w.Header()["Allow"] = allowPost
		refuse(w, http.StatusMethodNotAllowed, "Method not allowed")
		return
	}
	if !sse {
		refuse(w, http.StatusNotAcceptable, "Not Acceptable: the session's stream is an event stream; accept text/event-stream.")
		return
	}
	ls := NewStream(nil, "", sv.taskNotice)
	l, err := t.Attach(*s, notify.ListenerOptions{Owner: who, Address: addr, Held: StreamCost, Wake: ls.Signal}, sv.Offer().Lists())
	if err != nil {
		var le *owner.LimitError
		var be *owner.BudgetError
		switch {
		case errors.Is(err, notify.ErrClosed):
			refuse(w, http.StatusServiceUnavailable, "Service Unavailable: the server is stopping.")
		case errors.As(err, &le) && !le.Global, errors.As(err, &be) && be.Scope != owner.ScopeGlobal:
			refuse(w, http.StatusTooManyRequests, "Too many listeners: "+err.Error()+".")
		default:
			refuse(w, http.StatusServiceUnavailable, "Too many listeners: "+err.Error()+".")
		}
		return
	}
	ls.Listen(l)
	defer t.Detach(s.ID, l)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	wire.SetFraming(w.Header(), true)
	w.WriteHeader(http.StatusOK)
	ls.Open(wire.NewSSEWriter(w, sv.WriteTimeout))
	if ls.Out().Flush() != nil {
		return
	}
	stop := ls.Out().KeepAlive(sv.KeepAlive, cancel)
	defer stop()
	_ = ls.Run(ctx)
}

// refuse refuses a GET stream with status and a JSON-RPC error without
// id (see jsonrpc.Refuse; without data it cannot fail).
func refuse(w http.ResponseWriter, status int, message string) {
	_ = jsonrpc.Refuse(w, status, nil, jsonrpc.CodeServerError, message, nil)
}

// Subscription is a resources/subscribe or resources/unsubscribe request
// (before 2026-07-28).
type Subscription struct {
	Method string // its method, as the client sent it
	Params []byte // its params
	// Stream is the listener of the legacy SSE stream the request came
	// on; nil when it came otherwise.
	Stream *notify.Listener
	// Session is the request's legacy session; nil when it has none.
	Session *Session
	// Owner and Address are whom the session's subscriptions count for.
	Owner, Address owner.ID
}

// Follow serves a resources/subscribe or resources/unsubscribe: the URI
// joins (or leaves) what the client's stream hears: its legacy SSE
// stream, else its session's GET stream (kept in t). It returns the
// JSON-RPC error to answer, nil when the answer is an empty result.
func (t *Sessions) Follow(sub Subscription) *Refusal {
	uri, ok := wire.StringValue(wire.Member(sub.Params, "uri"))
	if !ok || uri == "" || len(uri) > notify.MaxURI {
		return &Refusal{Code: jsonrpc.CodeInvalidParams, Message: "Invalid params: uri must be a non-empty string of at most " + strconv.Itoa(notify.MaxURI) + " bytes."}
	}
	subscribe := sub.Method == metadata.MethodResourcesSubscribe
	var err error
	switch {
	case sub.Stream != nil:
		if subscribe {
			err = sub.Stream.Subscribe(uri)
		} else {
			sub.Stream.Unsubscribe(uri)
		}
	case sub.Session != nil:
		if subscribe {
			err = t.Subscribe(*sub.Session, sub.Owner, sub.Address, uri)
		} else {
			t.Unsubscribe(sub.Session.ID, uri)
		}
	default:
		return &Refusal{Code: jsonrpc.CodeInvalidRequest, Message: "Invalid Request: " + jsonx.SafeText(sub.Method) +
			" needs a session (initialize first) or a legacy SSE stream to deliver the updates on."}
	}
	if err != nil {
		return &Refusal{Code: jsonrpc.CodeServerError, Message: "Too many subscriptions: " + err.Error() + "."}
	}
	return nil
}
