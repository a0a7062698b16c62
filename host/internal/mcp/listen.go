package mcp

import (
	"context"
	"errors"

	"github.com/funcmcp/funcmcp/host/internal/mcp/listen"
	"github.com/funcmcp/funcmcp/host/internal/notify"
)

// Notifications that reach the client (see notify): on 2026-07-28 a
// subscriptions/listen stream carries what its filter asked for; before
// it, the session's GET stream and the legacy SSE stream carry the
// list_changed notifications and the updates of the resources the client
// subscribed to with resources/subscribe. Package listen serves the
// streams and keeps the sessions' subscriptions; this file decides what a
// request asks and answers what listen refuses.

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

// newListeners is what serves the handler's notification streams, reading
// what the endpoint serves and its tasks from h.
func newListeners(h *handler, o *Options) *listen.Server {
	return &listen.Server{
		KeepAlive: o.ListenKeepAlive, WriteTimeout: o.ListenWriteTimeout, Log: o.Logger,
		Offer: func() listen.Offer {
			return listen.Offer{Prompts: h.advertises(capPrompts), Resources: h.advertises(capResources), Tasks: h.tasks != nil}
		},
		ReadTask: func(ctx context.Context, scope, id string) ([]byte, func(), error) {
			if h.tasks == nil {
				return nil, nil, errNoTasks
			}
			t, err := h.tasks.Get(ctx, scope, id)
			if err != nil {
				return nil, nil, err
			}
			task, release := h.shared.Acquire(t)
			return task, release, nil
		},
		ServerInfo:    h.modernReplies.serverInfoMeta,
		TasksRequired: tasksRequiredData,
	}
}

// errNoTasks: the endpoint runs no tasks.
var errNoTasks = errors.New("tasks are off")

// listenSession is a legacy session as package listen keeps it; nil when
// there is none.
func listenSession(s *session) *listen.Session {
	if s == nil {
		return nil
	}
	return &listen.Session{ID: s.ID, Expires: s.Expires}
}

// serveListen answers subscriptions/listen (2026-07-28) with the stream
// package listen serves (listen.Server.Listen), or its refusal.
func (h *handler) serveListen(req *request) bool {
	if h.hub == nil {
		return false
	}
	f := h.listeners.Listen(req.w, h.hub, listen.Request{ID: validID(req.id), Params: req.msg.Params, HTTP: req.r,
		Owner: req.Owner(), Address: req.Caller().Address(), Scope: taskScope(req.Owner()),
		TasksDeclared: req.meta != nil && clientHasTasks(req.meta.ClientCapabilities), Alone: req.origin == nil && !req.batch, SSE: req.sse})
	switch {
	case f == nil:
		req.setOutcome("streamed")
	case f.Status == 0:
		h.rpcError(req, f.Code, f.Message, f.Data)
	default:
		req.setOutcome(f.Outcome)
		h.refuse(req.w, f.Status, validID(req.id), f.Code, f.Message, f.Data)
	}
	return true
}

// serveSubscribe answers resources/subscribe and resources/unsubscribe
// (before 2026-07-28): the URI joins (or leaves) what the client's stream
// hears (listen.Sessions.Follow).
func (h *handler) serveSubscribe(req *request) bool {
	if h.hub == nil || !h.advertises(capResources) {
		return false
	}
	sub := listen.Subscription{Method: req.msg.Method, Params: req.msg.Params, Session: listenSession(req.session),
		Owner: req.Owner(), Address: req.Caller().Address()}
	if req.origin != nil {
		sub.Stream = req.origin.Listener
	}
	if f := h.sessions.Follow(sub); f != nil {
		h.rpcError(req, f.Code, f.Message, f.Data)
		return true
	}
	h.result(req, []byte("{}"))
	return true
}
