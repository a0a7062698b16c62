package invoke

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"

	"github.com/funcmcp/funcmcp/host/internal/peer"
	"github.com/funcmcp/funcmcp/metadata"
)

// MaxNotificationsPerCall bounds how many notifications one invocation may
// send; past it the hub answers 429 and forwards nothing more.
const MaxNotificationsPerCall = 10000

// notifyPathPrefix is where the hub serves
// POST /invocations/{id}/notifications.
const notifyPathPrefix = "/invocations/"

// Notifier is the client's end of one call: where the notifications and
// requests of its invocation go (see package peer); its errors
// (peer.ErrNotRequested, …) say what the hub answers the worker.
type Notifier = peer.Notifier

// Hub is the host end of the per-invocation call channel back from the
// worker: a small HTTP server on a loopback port of its own, started on
// first use, where a running invocation POSTs its progress and log
// messages. Each invocation gets its own URL and a random bearer token,
// valid only while it runs. It is safe for concurrent use.
type Hub struct {
	log        *slog.Logger
	maxPerCall int64

	mu       sync.Mutex
	started  bool
	startErr error
	closed   bool
	srv      *http.Server
	base     string // http://127.0.0.1:<port>
	calls    map[string]*channel
}

// channel is one open call channel.
type channel struct {
	token []byte
	n     Notifier
	sent  atomic.Int64
	// ctx ends when the channel closes: a request waiting for the client's
	// answer stops with it.
	ctx    context.Context
	cancel context.CancelFunc
}

// Offer is what an invocation request carries of its channel: the headers
// the worker reads. Pass it to [Client.Invoke].
type Offer struct {
	header http.Header
	hub    *Hub // whose channel it is: an in-process call reaches it directly (local.go)
}

type offerKey struct{}

// NewHub returns a hub forwarding at most maxPerCall notifications per
// invocation (0: MaxNotificationsPerCall). Nothing listens before the
// first channel is opened.
func NewHub(log *slog.Logger, maxPerCall int) *Hub {
	if maxPerCall <= 0 {
		maxPerCall = MaxNotificationsPerCall
	}
	return &Hub{log: log, maxPerCall: int64(maxPerCall), calls: map[string]*channel{}}
}

// start listens on 127.0.0.1:0 once; later calls return the first result.
// hub.mu is held.
func (hub *Hub) start() error {
	if hub.started {
		return hub.startErr
	}
	hub.started = true
	if hub.closed {
		hub.startErr = errors.New("the host has stopped")
		return hub.startErr
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		hub.startErr = fmt.Errorf("listening for worker notifications: %w", err)
		return hub.startErr
	}
	hub.base = "http://" + ln.Addr().String()
	srv := &http.Server{
		Handler:           http.HandlerFunc(hub.serve),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(hub.log.Handler(), slog.LevelWarn),
	}
	hub.srv = srv
	go func() { _ = srv.Serve(ln) }()
	return nil
}

// Open registers invocation id and returns the offer for its request and
// the function that closes the channel. It returns a nil offer (and a
// close that does nothing) when n wants nothing or the channel cannot be
// started; the start failure is logged once.
func (hub *Hub) Open(id string, n Notifier) (*Offer, func()) {
	level, logs := n.LogLevel()
	mode := n.RequestMode()
	task := n.TaskState()
	if !n.WantsProgress() && !logs && mode == "" && !n.Resumable() && task == "" {
		return nil, func() {}
	}
	var secret [32]byte
	if _, err := rand.Read(secret[:]); err != nil {
		hub.log.Error("worker notifications are off for this call: no random token", "invocationId", id, "error", err)
		return nil, func() {}
	}
	token := base64.RawURLEncoding.EncodeToString(secret[:])
	ctx, cancel := context.WithCancel(context.Background())
	hub.mu.Lock()
	first := !hub.started
	err := hub.start()
	if err == nil {
		hub.calls[id] = &channel{token: []byte(token), n: n, ctx: ctx, cancel: cancel}
	}
	base := hub.base
	hub.mu.Unlock()
	if err != nil {
		cancel()
		if first {
			hub.log.Error("worker notifications are off: "+err.Error(), "error", err)
		}
		return nil, func() {}
	}
	hdr := http.Header{}
	hdr.Set(metadata.HeaderNotifyURL, base+notifyPathPrefix+id+"/notifications")
	hdr.Set(metadata.HeaderNotifyToken, token)
	if n.WantsProgress() {
		hdr.Set(metadata.HeaderNotifyProgress, "true")
	}
	if logs {
		hdr.Set(metadata.HeaderNotifyLogLevel, level)
	}
	if n.Resumable() {
		hdr.Set(metadata.HeaderResumable, "true")
	}
	if task != "" {
		hdr.Set(metadata.HeaderTask, task)
	}
	if mode != "" {
		hdr.Set(metadata.HeaderInputMode, mode)
		if caps := n.ClientCapabilities(); len(caps) > 0 {
			hdr.Set(metadata.HeaderClientCapabilities, metadata.EncodeHeaderJSON(caps))
		}
		if answers := n.InputResponses(); len(answers) > 0 {
			hdr.Set(metadata.HeaderInputResponses, metadata.EncodeHeaderJSON(answers))
		}
	}
	return &Offer{header: hdr, hub: hub}, func() {
		cancel()
		hub.mu.Lock()
		delete(hub.calls, id)
		hub.mu.Unlock()
	}
}

// Close stops the listener, if it started, and refuses channels opened
// later (their calls run without one). It is safe to call more than once.
func (hub *Hub) Close() {
	hub.mu.Lock()
	hub.closed = true
	srv := hub.srv
	hub.srv = nil
	hub.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// serve handles POST /invocations/{id}/notifications.
func (hub *Hub) serve(w http.ResponseWriter, r *http.Request) {
	id, ok := strings.CutPrefix(r.URL.Path, notifyPathPrefix)
	id, ok2 := strings.CutSuffix(id, "/notifications")
	if !ok || !ok2 || id == "" || strings.Contains(id, "/") {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	hub.mu.Lock()
	call := hub.calls[id]
	hub.mu.Unlock()
	if call == nil {
		http.Error(w, "no such invocation, or it has ended", http.StatusNotFound)
		return
	}
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if subtle.ConstantTimeCompare([]byte(token), call.token) != 1 {
		http.Error(w, "bad token", http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, metadata.MaxRequestBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			http.Error(w, fmt.Sprintf("a request is at most %d bytes", metadata.MaxRequestBytes), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the body failed", http.StatusBadRequest)
		return
	}
	if len(body) > metadata.MaxNotificationBytes {
		// Only a request may be larger than a notification.
		var head struct{ Type string }
		if json.Unmarshal(body, &head) != nil || head.Type != metadata.NotificationRequest {
			http.Error(w, fmt.Sprintf("a notification is at most %d bytes", metadata.MaxNotificationBytes), http.StatusRequestEntityTooLarge)
			return
		}
	}
	if call.sent.Add(1) > hub.maxPerCall {
		http.Error(w, fmt.Sprintf("at most %d notifications per invocation", hub.maxPerCall), http.StatusTooManyRequests)
		return
	}
	var nt metadata.Notification
	if err := json.Unmarshal(body, &nt); err != nil {
		http.Error(w, "decoding the notification: "+err.Error(), http.StatusBadRequest)
		return
	}
	switch nt.Type {
	case metadata.NotificationRequest:
		hub.request(w, r, call, &nt)
		return
	case metadata.NotificationStartTask:
		hub.startTask(w, r, call)
		return
	case metadata.NotificationCloseStream:
		if err := call.n.CloseStream(); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	switch err := deliver(call.n, &nt); {
	case err == nil, errors.Is(err, peer.ErrNotRequested):
		w.WriteHeader(http.StatusNoContent)
	case errors.Is(err, peer.ErrCallEnded):
		http.Error(w, "the invocation has ended", http.StatusNotFound)
	case errors.Is(err, errBadNotification), errors.Is(err, peer.ErrBadLogLevel), errors.Is(err, peer.ErrProgressNotIncreasing):
		http.Error(w, err.Error(), http.StatusBadRequest)
	default: // the client's stream failed
		http.Error(w, "delivering the notification failed: "+err.Error(), http.StatusBadGateway)
	}
}

// request serves a request to the client: it waits (as long as the
// worker's POST and the invocation last) for the client's answer, or for
// the call to record it for its input-required result, and answers 200
// with a metadata.RequestReply.
func (hub *Hub) request(w http.ResponseWriter, r *http.Request, call *channel, nt *metadata.Notification) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(call.ctx, cancel) // the invocation ended
	defer stop()
	reply, err := call.n.Request(ctx, nt.Key, nt.Method, nt.Params)
	switch {
	case err == nil:
	case errors.Is(err, peer.ErrNoClientRequests):
		http.Error(w, err.Error(), http.StatusConflict)
		return
	case errors.Is(err, peer.ErrBadClientRequest):
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	case errors.Is(err, peer.ErrCallEnded), call.ctx.Err() != nil:
		http.Error(w, "the invocation has ended", http.StatusNotFound)
		return
	case ctx.Err() != nil:
		http.Error(w, "the request was given up: "+err.Error(), http.StatusGatewayTimeout)
		return
	default: // the client's stream failed
		http.Error(w, "sending the request to the client failed: "+err.Error(), http.StatusBadGateway)
		return
	}
	writeReply(w, reply)
}

// startTask makes the call a task: 200 with a metadata.StartTaskReply, or
// 409 when it cannot be one.
func (hub *Hub) startTask(w http.ResponseWriter, r *http.Request, call *channel) {
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stop := context.AfterFunc(call.ctx, cancel) // the invocation ended
	defer stop()
	reply, err := call.n.StartTask(ctx)
	if err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	writeReply(w, reply)
}

// writeReply answers the worker 200 with v as JSON.
func writeReply(w http.ResponseWriter, v any) {
	data, err := metadata.Marshal(v)
	if err != nil {
		http.Error(w, "encoding the reply failed", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
}

var errBadNotification = errors.New("bad notification")

// deliver forwards one notification to the client.
func deliver(n Notifier, nt *metadata.Notification) error {
	switch nt.Type {
	case metadata.NotificationProgress:
		if nt.Progress == nil {
			return fmt.Errorf("%w: a progress notification needs \"progress\"", errBadNotification)
		}
		return n.Progress(*nt.Progress, nt.Total, nt.Message)
	case metadata.NotificationLog:
		if len(nt.Data) == 0 {
			return fmt.Errorf("%w: a log notification needs \"data\"", errBadNotification)
		}
		return n.Log(nt.Level, nt.Logger, nt.Data)
	default:
		return fmt.Errorf("%w: unknown type %q", errBadNotification, nt.Type)
	}
}

// withOffer carries the offer of an invocation, through the azcore
// pipeline, to the policy that adds its headers; a nil offer leaves ctx as
// it is. The key never leaves this package.
func withOffer(ctx context.Context, o *Offer) context.Context {
	if o == nil {
		return ctx
	}
	return context.WithValue(ctx, offerKey{}, o)
}

// offerHeadersPolicy adds the call channel headers of the invocation, when
// it has a channel.
type offerHeadersPolicy struct{}

func (offerHeadersPolicy) Do(req *policy.Request) (*http.Response, error) {
	addTraceHeaders(req.Raw().Context(), req.Raw().Header)
	if o, ok := req.Raw().Context().Value(offerKey{}).(*Offer); ok {
		for k, v := range o.header {
			req.Raw().Header[k] = v
		}
	}
	return req.Next()
}
