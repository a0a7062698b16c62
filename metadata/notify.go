package metadata

import "encoding/json"

// The notification channel: while a tool runs, a worker may send the host
// progress and client-visible log messages, which the host forwards to the
// MCP client as notifications/progress and notifications/message on the
// call's response stream, before the result.
//
// The host offers the channel per invocation, in headers of the invocation
// request (POST /{function}); the real Azure Functions host never sends them,
// so there a worker sees no channel and sends nothing:
//
//	X-Funcmcp-Notify-Url:       http://127.0.0.1:<port>/invocations/<id>/notifications
//	X-Funcmcp-Notify-Token:     <random secret of this invocation>
//	X-Funcmcp-Notify-Progress:  true   (the client asked for progress)
//	X-Funcmcp-Notify-Log-Level: info   (the least severe level the client wants; absent: no logs)
//	X-Funcmcp-Resumable:        true   (the response stream can be closed and resumed; see HeaderResumable)
//
// The worker POSTs one [Notification] per request to the URL with
// "Authorization: Bearer <token>" and a body of at most
// [MaxNotificationBytes]. The host answers 204 when the notification was
// delivered or filtered out, and an error status otherwise (401 bad token,
// 404 no such invocation or it ended, 413 too large, 429 too many
// notifications for one invocation, 400 a malformed notification).
const (
	HeaderNotifyURL      = "X-Funcmcp-Notify-Url"
	HeaderNotifyToken    = "X-Funcmcp-Notify-Token"
	HeaderNotifyProgress = "X-Funcmcp-Notify-Progress"
	HeaderNotifyLogLevel = "X-Funcmcp-Notify-Log-Level"
)

// MaxNotificationBytes bounds the body of one notification request.
const MaxNotificationBytes = 64 << 10

// Notification types ([NotificationRequest] too, see clientreq.go).
const (
	NotificationProgress = "progress"
	NotificationLog      = "log"
	// NotificationCloseStream asks the host to end the client's response
	// stream now (see [HeaderResumable]); it has no other field.
	NotificationCloseStream = "closeStream"
)

// HeaderResumable, "true" beside the channel headers, says the call's
// response stream can be closed and resumed (SSE polling, SEP-1699, MCP
// 2025-11-25): the worker may POST {"type":"closeStream"}
// ([NotificationCloseStream]) to the channel URL while the tool keeps
// running. The host ends the client's response stream, the client
// reconnects (GET with Last-Event-ID) and gets the rest, the result
// included. The host answers 204 when the stream is closed (or already
// was) and 409 when it cannot be (no resumable stream).
const HeaderResumable = "X-Funcmcp-Resumable"

// Notification is one message a worker sends the host during an invocation:
// {"type":"progress","progress":50,"total":100,"message":"…"} or
// {"type":"log","level":"info","logger":"…","data":…}.
type Notification struct {
	Type string `json:"type"`
	// Progress is the work done so far (progress only; it must increase
	// from one notification to the next).
	Progress *float64 `json:"progress,omitempty"`
	// Total is the whole work, when known (progress only; 0 means unknown).
	Total float64 `json:"total,omitempty"`
	// Message describes the progress (progress only, optional).
	Message string `json:"message,omitempty"`
	// Level is one of [LogLevels] (log only).
	Level string `json:"level,omitempty"`
	// Logger names the source of a log message (log only, optional).
	Logger string `json:"logger,omitempty"`
	// Data is the log message: any JSON value, usually a string (log only).
	Data json.RawMessage `json:"data,omitempty"`
	// Key names a request to the client within the invocation (request
	// only): the key of its answer, and of its entry in an
	// InputRequiredResult's inputRequests.
	Key string `json:"key,omitempty"`
	// Method and Params are the request to the client (request only): one
	// of the methods of [CapabilityOf], with its params object.
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
}

// LogLevels are the MCP log levels (RFC 5424 severities), least severe
// first.
var LogLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// LogLevelRank is the position of level in [LogLevels] (0 for debug, 7 for
// emergency), or -1 when level is not an MCP log level. A message is sent
// when its rank is at least the rank of the level the client asked for.
func LogLevelRank(level string) int {
	for i, l := range LogLevels {
		if l == level {
			return i
		}
	}
	return -1
}
