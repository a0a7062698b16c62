package worker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/funcmcp/funcmcp/metadata"
)

// LogLevel is the level of a log message sent to the MCP client with
// [ToolContext.ClientLog]: the RFC 5424 severities MCP uses.
type LogLevel string

// The MCP log levels, least severe first.
const (
	LevelDebug     LogLevel = "debug"
	LevelInfo      LogLevel = "info"
	LevelNotice    LogLevel = "notice"
	LevelWarning   LogLevel = "warning"
	LevelError     LogLevel = "error"
	LevelCritical  LogLevel = "critical"
	LevelAlert     LogLevel = "alert"
	LevelEmergency LogLevel = "emergency"
)

// notifyTimeout bounds one notification request to the host.
const notifyTimeout = 5 * time.Second

// notifyClient sends notifications to the host, which is always local.
var notifyClient = &http.Client{
	Timeout: notifyTimeout,
	Transport: &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: notifyTimeout}).DialContext,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     30 * time.Second,
	},
}

// notifier is a tool call's end of the host's notification channel (see
// package metadata: HeaderNotifyURL). A nil *notifier sends nothing.
type notifier struct {
	ctx       context.Context // the invocation's: once it is done, nothing is sent
	url, auth string
	progress  bool   // the client asked for progress
	minLevel  int    // rank of the least severe level the client wants; -1: none
	resumable bool   // the response stream can be closed and resumed (CloseSSEStream)
	task      string // metadata.TaskStateRunning, TaskStateOffered or "" (see task.go); under mu
	inTask    atomic.Bool

	// channel carries the notifications and the requests to the client
	// in the host's process (metadata.Channel); nil: notifyClient and
	// requestClient, over the network.
	channel http.RoundTripper

	mu     sync.Mutex // sends one at a time, in call order
	broken bool       // a send failed: the channel is gone, stop trying
}

// newNotifier reads the channel the host offers in the invocation request
// headers; ctx is the invocation's, which bounds every send. It returns nil
// when there is none (the real Azure Functions host never offers one) or
// when the offer is not usable: the URL must be plain http to a loopback
// address, since the host runs on the same machine. The channel carries
// notifications, when the client wants them, and requests to the client
// (clientreq.go).
func newNotifier(ctx context.Context, h http.Header) *notifier {
	raw, token := h.Get(metadata.HeaderNotifyURL), h.Get(metadata.HeaderNotifyToken)
	if raw == "" || token == "" {
		return nil
	}
	// In the host's process the channel's transport serves the URL: it is
	// never dialled, and needs no check.
	channel := metadata.Channel(ctx)
	if channel == nil {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "http" || u.User != nil || !loopbackHost(u.Hostname()) {
			return nil
		}
	}
	n := &notifier{ctx: ctx, url: raw, auth: "Bearer " + token, minLevel: -1, channel: channel,
		progress:  h.Get(metadata.HeaderNotifyProgress) == "true",
		resumable: h.Get(metadata.HeaderResumable) == "true",
		task:      h.Get(metadata.HeaderTask)}
	n.inTask.Store(n.task == metadata.TaskStateRunning)
	if lvl := h.Get(metadata.HeaderNotifyLogLevel); lvl != "" {
		n.minLevel = metadata.LogLevelRank(lvl)
	}
	return n
}

// notifications is the client that sends the notifications.
func (n *notifier) notifications() *http.Client {
	if n.channel != nil {
		return &http.Client{Timeout: notifyTimeout, Transport: n.channel}
	}
	return notifyClient
}

// requestsClient is the client that sends the requests to the MCP client.
func (n *notifier) requestsClient() *http.Client {
	if n.channel != nil {
		return &http.Client{Transport: n.channel}
	}
	return requestClient
}

// notifies reports whether the client wants progress or log messages.
func (n *notifier) notifies() bool { return n != nil && (n.progress || n.minLevel >= 0) }

func loopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// send POSTs one notification; failures are silent (progress and logs are
// best effort) and stop later sends.
func (n *notifier) send(nt *metadata.Notification) {
	body, err := metadata.Marshal(nt)
	if err != nil || len(body) > metadata.MaxNotificationBytes {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	status, err := n.postLocked(n.ctx, body)
	// 400 is one bad notification (a level or progress the host refused);
	// anything else that failed means the channel is gone.
	if err == nil && status >= 300 && status != http.StatusBadRequest {
		n.broken = true
	}
}

// errChannelGone: an earlier send failed, or the invocation ended.
var errChannelGone = errors.New("the host's channel for this call is gone")

// postLocked POSTs one notification body, bounded by ctx, the invocation
// and the notification timeout, and returns the host's status. A request
// that fails, other than by the end of ctx, marks the channel broken. n.mu
// must be held, so that sends keep their order.
func (n *notifier) postLocked(parent context.Context, body []byte) (int, error) {
	status, _, err := n.exchangeLocked(parent, body)
	return status, err
}

// exchangeLocked is postLocked, returning the start of the host's answer
// too (at most 4 KiB).
func (n *notifier) exchangeLocked(parent context.Context, body []byte) (int, []byte, error) {
	if n.broken {
		return 0, nil, errChannelGone
	}
	if n.ctx.Err() != nil { // the host gave up the invocation: no one listens
		n.broken = true
		return 0, nil, errChannelGone
	}
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	stop := context.AfterFunc(n.ctx, cancel)
	defer stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.url, bytes.NewReader(body))
	if err != nil {
		n.broken = true
		return 0, nil, err
	}
	req.Header.Set("Authorization", n.auth)
	req.Header.Set("Content-Type", "application/json")
	resp, err := n.notifications().Do(req)
	if err != nil {
		if parent.Err() == nil || n.ctx.Err() != nil {
			n.broken = true
		}
		return 0, nil, err
	}
	reply, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	_ = resp.Body.Close()
	return resp.StatusCode, reply, nil
}

// Notifies reports whether notifications sent with [ToolContext.Progress]
// or [ToolContext.ClientLog] can reach the client: the host offered a
// channel and the client asked for progress or log messages. It is false
// under the real Azure Functions host, which has no such channel.
func (tc *ToolContext) Notifies() bool { return tc.notify.notifies() }

// Progress tells the client how far the tool has got: done out of total
// (total <= 0 when unknown), with an optional message. funchost forwards it
// as notifications/progress on the call's response stream, before the
// result, when the client sent a progressToken, and in a task (see
// [ToolContext.InTask]) as the task's status message; otherwise, and under
// the real Azure Functions host, it does nothing. done must increase from one
// call to the next. It waits until the host has the notification (a
// loopback round trip, at most 5 seconds, and never past the end of the
// invocation: once the host has dropped the call nothing is sent); failures
// are ignored.
func (tc *ToolContext) Progress(done, total float64, message string) {
	if tc.notify == nil || !tc.notify.progress && !tc.InTask() {
		return
	}
	tc.notify.send(&metadata.Notification{Type: metadata.NotificationProgress, Progress: &done, Total: total, Message: message})
}

// ClientLog sends a log message to the MCP client (notifications/message,
// logger: the tool name), formatted as by fmt.Sprint, when the client asked
// for messages at this level or a less severe one: with logging/setLevel
// (revisions up to 2025-11-25) or in the request's _meta (2026-07-28). It
// does nothing otherwise and under the real Azure Functions host; use
// [ToolContext.Logf] for the function's own log. Failures are ignored.
func (tc *ToolContext) ClientLog(level LogLevel, args ...any) {
	if !tc.clientLogs(level) {
		return
	}
	tc.sendLog(level, fmt.Sprint(args...))
}

// ClientLogf is [ToolContext.ClientLog] formatted as by fmt.Sprintf.
func (tc *ToolContext) ClientLogf(level LogLevel, format string, args ...any) {
	if !tc.clientLogs(level) {
		return
	}
	tc.sendLog(level, fmt.Sprintf(format, args...))
}

func (tc *ToolContext) clientLogs(level LogLevel) bool {
	if tc.notify == nil || tc.notify.minLevel < 0 {
		return false
	}
	rank := metadata.LogLevelRank(string(level))
	return rank >= 0 && rank >= tc.notify.minLevel
}

func (tc *ToolContext) sendLog(level LogLevel, msg string) {
	data, err := metadata.Marshal(msg)
	if err != nil {
		return
	}
	tc.notify.send(&metadata.Notification{Type: metadata.NotificationLog, Level: string(level), Logger: tc.Name, Data: data})
}
