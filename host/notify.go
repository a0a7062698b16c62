package host

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

	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/metadata"
)

// MaxNotificationsPerCall bounds how many notifications one invocation may
// send; past it the host answers 429 and forwards nothing more.
const MaxNotificationsPerCall = 10000

// notifyPathPrefix is where the notification channel serves
// POST /invocations/{id}/notifications.
const notifyPathPrefix = "/invocations/"

// notifyHub is the host end of the worker's notification channel: a small
// HTTP server on a loopback port of its own, started on first use, where a
// running invocation POSTs its progress and log messages. Each invocation
// gets its own URL and a random bearer token, valid only while it runs.
type notifyHub struct {
	log        *slog.Logger
	maxPerCall int64

	mu       sync.Mutex
	started  bool
	startErr error
	closed   bool
	srv      *http.Server
	base     string // http://127.0.0.1:<port>
	calls    map[string]*notifyCall
}

// notifyCall is one open channel.
type notifyCall struct {
	token []byte
	n     *mcp.Notifier
	sent  atomic.Int64
}

// notifyOffer is what an invocation request carries of the channel: the
// headers the worker reads.
type notifyOffer struct{ header http.Header }

type notifyOfferKey struct{}

func newNotifyHub(log *slog.Logger) *notifyHub {
	return &notifyHub{log: log, maxPerCall: MaxNotificationsPerCall, calls: map[string]*notifyCall{}}
}

// start listens on 127.0.0.1:0 once; later calls return the first result.
// hub.mu is held.
func (hub *notifyHub) start() error {
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
	hub.srv = &http.Server{
		Handler:           http.HandlerFunc(hub.serve),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		MaxHeaderBytes:    16 << 10,
		ErrorLog:          slog.NewLogLogger(hub.log.Handler(), slog.LevelWarn),
	}
	go func() { _ = hub.srv.Serve(ln) }()
	return nil
}

// open registers invocation id and returns the offer for its request and
// the function that closes the channel. It returns nil (no channel, nothing
// to close) when n wants nothing or the channel cannot be started; the
// start failure is logged once.
func (hub *notifyHub) open(id string, n *mcp.Notifier) (*notifyOffer, func()) {
	level, logs := n.LogLevel()
	if !n.WantsProgress() && !logs {
		return nil, func() {}
	}
	var secret [32]byte
	if _, err := rand.Read(secret[:]); err != nil {
		hub.log.Error("worker notifications are off for this call: no random token", "invocationId", id, "error", err)
		return nil, func() {}
	}
	token := base64.RawURLEncoding.EncodeToString(secret[:])
	hub.mu.Lock()
	first := !hub.started
	err := hub.start()
	if err == nil {
		hub.calls[id] = &notifyCall{token: []byte(token), n: n}
	}
	base := hub.base
	hub.mu.Unlock()
	if err != nil {
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
	return &notifyOffer{header: hdr}, func() {
		hub.mu.Lock()
		delete(hub.calls, id)
		hub.mu.Unlock()
	}
}

// close stops the server; channels opened later are refused.
func (hub *notifyHub) close() {
	hub.mu.Lock()
	hub.closed = true
	srv := hub.srv
	hub.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// serve handles POST /invocations/{id}/notifications.
func (hub *notifyHub) serve(w http.ResponseWriter, r *http.Request) {
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
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, metadata.MaxNotificationBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			http.Error(w, fmt.Sprintf("a notification is at most %d bytes", metadata.MaxNotificationBytes), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the body failed", http.StatusBadRequest)
		return
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
	switch err := deliver(call.n, &nt); {
	case err == nil, errors.Is(err, mcp.ErrNotRequested):
		w.WriteHeader(http.StatusNoContent)
	case errors.Is(err, mcp.ErrCallEnded):
		http.Error(w, "the invocation has ended", http.StatusNotFound)
	case errors.Is(err, errBadNotification), errors.Is(err, mcp.ErrBadLogLevel), errors.Is(err, mcp.ErrProgressNotIncreasing):
		http.Error(w, err.Error(), http.StatusBadRequest)
	default: // the client's stream failed
		http.Error(w, "delivering the notification failed: "+err.Error(), http.StatusBadGateway)
	}
}

var errBadNotification = errors.New("bad notification")

// deliver forwards one notification to the client.
func deliver(n *mcp.Notifier, nt *metadata.Notification) error {
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

// withNotifyOffer attaches the offer to an invocation's context; the
// notifyHeadersPolicy adds its headers to the request.
func withNotifyOffer(ctx context.Context, o *notifyOffer) context.Context {
	if o == nil {
		return ctx
	}
	return context.WithValue(ctx, notifyOfferKey{}, o)
}

// notifyHeadersPolicy adds the notification channel headers of the
// invocation, when it has a channel.
type notifyHeadersPolicy struct{}

func (notifyHeadersPolicy) Do(req *policy.Request) (*http.Response, error) {
	if o, ok := req.Raw().Context().Value(notifyOfferKey{}).(*notifyOffer); ok {
		for k, v := range o.header {
			req.Raw().Header[k] = v
		}
	}
	return req.Next()
}
