package metadata

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// Requests to the client: while a tool (or prompt) runs, a worker may ask
// the MCP client something — elicitation/create (ask the user),
// sampling/createMessage (ask the client's model), roots/list — through the
// channel the host offers the invocation (see [HeaderNotifyURL]). The real
// Azure Functions host offers none, so there such requests are not
// supported and a worker says so at once.
//
// Besides the channel's URL and token, the host sends:
//
//	X-Funcmcp-Client-Capabilities: <base64url of the client's capabilities object>
//	X-Funcmcp-Input-Mode:          stream | input-required
//	X-Funcmcp-Input-Responses:     <base64url of {"<key>": <result>, …}>   (input-required only, when there are answers)
//
// The worker POSTs one [Notification] of type "request" per request to the
// channel URL, with Key, Method and Params, and the host answers 200 with a
// [RequestReply]:
//
//   - stream mode (MCP revisions before 2026-07-28): the host sends the
//     request to the client on the call's response stream, waits for the
//     client's answer (bounded by the call's time limit) and replies with
//     its result or JSON-RPC error;
//   - input-required mode (2026-07-28, SEP-2322): the host keeps the request
//     for the InputRequiredResult it will answer the call with, and replies
//     {"inputRequired":true}; the worker ends the handler run. When the
//     client retries with the answers, the host invokes the function again
//     with them in X-Funcmcp-Input-Responses, and a request whose key has an
//     answer is answered from there without asking the host.
//
// The body of a request is at most [MaxRequestBytes].
const (
	HeaderClientCapabilities = "X-Funcmcp-Client-Capabilities"
	HeaderInputMode          = "X-Funcmcp-Input-Mode"
	HeaderInputResponses     = "X-Funcmcp-Input-Responses"
)

// Input modes, the values of [HeaderInputMode].
const (
	InputModeStream        = "stream"
	InputModeInputRequired = "input-required"
)

// NotificationRequest is the [Notification] type of a request to the client.
const NotificationRequest = "request"

// MaxRequestBytes bounds the body of one request notification.
const MaxRequestBytes = 1 << 20

// Methods a tool may send the client, and the client capability each needs.
const (
	MethodElicitationCreate = "elicitation/create"
	MethodSamplingCreate    = "sampling/createMessage"
	MethodRootsList         = "roots/list"
)

// CapabilityOf is the client capability a request method needs ("" for a
// method a worker may not send).
func CapabilityOf(method string) string {
	switch method {
	case MethodElicitationCreate:
		return "elicitation"
	case MethodSamplingCreate:
		return "sampling"
	case MethodRootsList:
		return "roots"
	}
	return ""
}

// RequestReply is the host's answer to a request notification: the
// client's Result, its JSON-RPC Error, or InputRequired.
type RequestReply struct {
	Result        json.RawMessage `json:"result,omitempty"`
	Error         *RequestError   `json:"error,omitempty"`
	InputRequired bool            `json:"inputRequired,omitempty"`
}

// RequestError is a JSON-RPC error the client answered a request with.
type RequestError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// EncodeHeaderJSON is the form of a JSON value in a header: base64url
// without padding.
func EncodeHeaderJSON(v json.RawMessage) string { return base64.RawURLEncoding.EncodeToString(v) }

// DecodeHeaderJSON reads a header written by [EncodeHeaderJSON] into v.
func DecodeHeaderJSON(s string, v any) error {
	data, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("decoding a funcmcp header: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decoding a funcmcp header: %w", err)
	}
	return nil
}
