package host

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/metadata"
)

// DefaultMaxChangesPerSecond is how many changes per second the worker may
// announce when Options.MaxChangesPerSecond is 0 (burst: as many at once).
const DefaultMaxChangesPerSecond = 100

// changesPath is where the change channel takes POST requests.
const changesPath = "/changes"

// changeChannel is funchost's end of the app-wide change channel (see
// metadata.EnvChangesURL): a small HTTP server on a loopback port of its
// own, started with the worker, where any code of the worker process (a
// tool, a timer goroutine, another function of the handler) POSTs a change
// it announces. It checks each change and hands it to publish. One key per
// host process, given to the worker in its environment; the rate is that of
// the worker, whichever of its restarts sends.
type changeChannel struct {
	log     *slog.Logger
	key     []byte
	limit   *rate.Limiter
	publish func(notify.Change)

	mu       sync.Mutex
	started  bool
	closed   bool
	srv      *http.Server
	url      string
	startErr error
}

// newChangeChannel makes the channel of h; nothing listens before the
// worker is started (workerValues).
func (h *Host) newChangeChannel() *changeChannel {
	return newChangeChannel(h.log, rate.NewLimiter(rate.Limit(h.opts.MaxChangesPerSecond), h.opts.MaxChangesPerSecond), h.publishAnnounced)
}

func newChangeChannel(log *slog.Logger, limit *rate.Limiter, publish func(notify.Change)) *changeChannel {
	return &changeChannel{log: log, limit: limit, publish: publish}
}

// publishAnnounced passes a change the app announced on to the clients that
// listen: to the listeners' hub (publish), or to changeSink when a test
// set one.
func (h *Host) publishAnnounced(c notify.Change) {
	switch {
	case h.changeSink != nil:
		h.changeSink(c)
	case h.changes != nil:
		h.publish(c)
	}
}

// workerValues are the settings the worker process gets: the app's Values
// and the change channel. When the channel cannot be offered the worker
// gets the variables empty (set in funchost's own environment they would
// name another host's channel) and announces nothing.
func (h *Host) workerValues() []config.Setting {
	u, key := h.announced.offer()
	return append(slices.Clone(h.cfg.Values),
		config.Setting{Key: metadata.EnvChangesURL, Value: u},
		config.Setting{Key: metadata.EnvChangesKey, Value: key})
}

// offer starts the listener, once, and returns its URL and key; both are
// "" when it cannot start (logged once) or there is no channel (nil).
func (cc *changeChannel) offer() (url, key string) {
	if cc == nil {
		return "", ""
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if !cc.started {
		cc.started = true
		cc.startErr = cc.startLocked()
		if cc.startErr != nil {
			cc.log.Error("changes announced by the app are off: "+cc.startErr.Error(), "error", cc.startErr)
		}
	}
	if cc.startErr != nil {
		return "", ""
	}
	return cc.url, string(cc.key)
}

// startLocked listens on 127.0.0.1:0 and serves. cc.mu is held.
func (cc *changeChannel) startLocked() error {
	if cc.closed {
		return errors.New("the host has stopped")
	}
	var secret [32]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return fmt.Errorf("making the change channel's key: %w", err)
	}
	cc.key = []byte(base64.RawURLEncoding.EncodeToString(secret[:]))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("listening for changes announced by the app: %w", err)
	}
	cc.url = "http://" + ln.Addr().String() + changesPath
	cc.srv = &http.Server{
		Handler:           cc,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      10 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    8 << 10,
		ErrorLog:          slog.NewLogLogger(cc.log.Handler(), slog.LevelWarn),
	}
	srv := cc.srv
	go func() { _ = srv.Serve(ln) }()
	return nil
}

// close stops the listener, if it started; a later offer offers nothing.
// It does nothing on a nil channel.
func (cc *changeChannel) close() {
	if cc == nil {
		return
	}
	cc.mu.Lock()
	cc.closed = true
	srv := cc.srv
	cc.srv = nil
	cc.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// ServeHTTP takes one change: POST /changes with the key, a JSON body of at
// most metadata.MaxChangeBytes, within the rate; 204 when taken.
func (cc *changeChannel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != changesPath {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	key, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if subtle.ConstantTimeCompare([]byte(key), cc.key) != 1 {
		http.Error(w, "bad key", http.StatusUnauthorized)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		http.Error(w, "a change is application/json", http.StatusUnsupportedMediaType)
		return
	}
	if !cc.limit.Allow() {
		w.Header().Set("Retry-After", "1")
		http.Error(w, fmt.Sprintf("at most %v changes per second (MaxChangesPerSecond); this one was dropped", cc.limit.Limit()), http.StatusTooManyRequests)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, metadata.MaxChangeBytes))
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			http.Error(w, fmt.Sprintf("a change is at most %d bytes", metadata.MaxChangeBytes), http.StatusRequestEntityTooLarge)
			return
		}
		http.Error(w, "reading the change failed", http.StatusBadRequest)
		return
	}
	c, err := checkAnnounced(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	attrs := []any{"kind", string(c.Kind)}
	if c.URI != "" {
		attrs = append(attrs, "uri", c.URI)
	}
	cc.log.Info("Change announced by the app", attrs...)
	cc.publish(c)
	w.WriteHeader(http.StatusNoContent)
}

// checkAnnounced decodes a change the worker announced and checks it: a
// change of a kind the worker may announce (a task's changes come from the
// host alone) and, for a resource, a concrete absolute URI.
func checkAnnounced(body []byte) (notify.Change, error) {
	c, err := notify.Decode(body)
	if err != nil {
		return notify.Change{}, fmt.Errorf("decoding the change: %w", err)
	}
	switch c.Kind {
	case notify.ToolsListChanged, notify.PromptsListChanged, notify.ResourcesListChanged:
		if c.URI != "" {
			return notify.Change{}, fmt.Errorf("%w: %s has no uri", notify.ErrBadChange, c.Kind)
		}
	case notify.ResourceUpdated:
		if binding.IsURITemplate(c.URI) {
			return notify.Change{}, fmt.Errorf("%w: a resource template is not a resource; name the URI that changed", notify.ErrBadChange)
		}
		if err := binding.ValidateResourceURI(c.URI); err != nil {
			return notify.Change{}, fmt.Errorf("%w: %w", notify.ErrBadChange, err)
		}
	default:
		return notify.Change{}, fmt.Errorf("%w: the app may not announce %s", notify.ErrBadChange, c.Kind)
	}
	return notify.Change{Kind: c.Kind, URI: c.URI}, nil
}
