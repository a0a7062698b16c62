package metadata

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/funcmcp/funcmcp/internal/jsonx"
)

// Custom-handler HTTP protocol headers sent by the host with each invocation.
const (
	HeaderInvocationID = "X-Azure-Functions-InvocationId"
	HeaderHostVersion  = "X-Azure-Functions-HostVersion"
)

// Environment variables the host sets for the custom-handler process.
const (
	EnvCustomHandlerPort = "FUNCTIONS_CUSTOMHANDLER_PORT"
	EnvHTTPWorkerPort    = "FUNCTIONS_HTTPWORKER_PORT"
	EnvWorkerID          = "FUNCTIONS_CUSTOMHANDLER_WORKER_ID"
	EnvHTTPWorkerID      = "FUNCTIONS_HTTPWORKER_ID"
	EnvAppRootPath       = "FUNCTIONS_APP_ROOT_PATH"
)

// InvocationRequest is the body of POST /{function}: one Data entry per input
// binding (the trigger among them) and the trigger metadata. Keys decode
// case-insensitively.
type InvocationRequest struct {
	Data     map[string]json.RawMessage `json:"Data"`
	Metadata map[string]json.RawMessage `json:"Metadata"`
	// Owned says Data's values are the reader's to keep: a context
	// [ToolContextFromRequest] decodes holds slices of them, not a copy.
	// Set it only when nothing changes them afterwards.
	Owned bool `json:"-"`
}

// InvocationResponse is the custom handler's reply. For a tool with
// useResultSchema, ReturnValue is a JSON string holding a [ToolResult].
type InvocationResponse struct {
	Outputs     map[string]json.RawMessage `json:"Outputs"`
	Logs        []string                   `json:"Logs"`
	ReturnValue json.RawMessage            `json:"ReturnValue"`
}

// Transport names sent in the tool invocation context.
const (
	TransportStreamableHTTP = "http-streamable"
	TransportSSE            = "http-sse"
	TransportHTTP           = "http"
)

// ToolInvocationContext is the trigger value of a tool call.
type ToolInvocationContext struct {
	Name       string                     `json:"name"`
	Arguments  map[string]json.RawMessage `json:"arguments,omitempty"`
	SessionID  string                     `json:"sessionid,omitempty"`
	ClientInfo *ClientInfo                `json:"clientinfo,omitempty"`
	Transport  *Transport                 `json:"transport,omitempty"`

	// RawArguments is the arguments object as it arrived, set by
	// [DecodeToolInvocationContext], so it can be decoded into a typed
	// value without encoding Arguments again.
	RawArguments json.RawMessage `json:"-"`
}

// ClientInfo is the MCP client's implementation info.
type ClientInfo struct {
	Name    string `json:"name"`
	Title   string `json:"title,omitempty"`
	Version string `json:"version"`
}

// Transport says how the call reached the host.
type Transport struct {
	Name       string               `json:"name"`
	SessionID  string               `json:"sessionId,omitempty"`
	Properties *TransportProperties `json:"properties,omitempty"`
}

// TransportProperties carries the request headers (multi-values joined with
// ","), decoded when first read ([Headers]).
type TransportProperties struct {
	Headers Headers `json:"headers,omitzero"`
}

// Argument returns the argument called name, matched exactly first and then
// case-insensitively, as the .NET worker does.
func (c *ToolInvocationContext) Argument(name string) (json.RawMessage, bool) {
	return LookupFoldMap(c.Arguments, name)
}

// Header returns a request header of the call, matched case-insensitively.
func (t *Transport) Header(name string) (string, bool) {
	if t == nil || t.Properties == nil {
		return "", false
	}
	return t.Properties.Headers.Get(name)
}

// maxStringEncodings bounds how many times a trigger value may be wrapped in
// JSON strings; the Functions host wraps it once or twice.
const maxStringEncodings = 8

// UnwrapJSONString strips JSON string encodings from raw until it is no longer
// a JSON string holding JSON, at most a few levels deep. A string whose content
// is not JSON is returned still encoded (it is a JSON string value).
func UnwrapJSONString(raw []byte) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	for i := 0; i < maxStringEncodings; i++ {
		if len(raw) == 0 || raw[0] != '"' {
			return raw, nil
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		inner := bytes.TrimSpace([]byte(s))
		if !json.Valid(inner) {
			return raw, nil
		}
		raw = inner
	}
	return nil, fmt.Errorf("value is JSON-encoded more than %d times", maxStringEncodings)
}

// DecodeToolInvocationContext decodes a trigger value: the context as a JSON
// object, or that object JSON-encoded as a string once or more. The
// context as funchost and the Functions host spell it is read in one pass
// of the module's scanner; any other spelling is decoded by encoding/json,
// to the same result.
func DecodeToolInvocationContext(raw []byte) (*ToolInvocationContext, error) {
	return decodeToolInvocationContext(raw, false)
}

// decodeToolInvocationContext is DecodeToolInvocationContext; owned says
// raw may be held as it is.
func decodeToolInvocationContext(raw []byte, owned bool) (*ToolInvocationContext, error) {
	inner, err := UnwrapJSONString(raw)
	if err != nil {
		return nil, fmt.Errorf("decoding tool invocation context: %w", err)
	}
	if len(inner) == 0 || inner[0] != '{' {
		return nil, errors.New("decoding tool invocation context: not a JSON object")
	}
	held := inner // a string's content was unquoted into a new buffer
	if trimmed := bytes.TrimSpace(raw); trimmed[0] != '"' && !owned {
		held = bytes.Clone(inner)
	}
	if c, ok := scanToolContext(held); ok {
		return c, nil
	}
	return decodeToolContextJSON(inner)
}

// decodeToolContextJSON decodes the context object with encoding/json.
func decodeToolContextJSON(inner []byte) (*ToolInvocationContext, error) {
	type plain ToolInvocationContext // no methods: a plain decode
	var wire struct {
		plain
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(inner, &wire); err != nil {
		return nil, fmt.Errorf("decoding tool invocation context: %w", err)
	}
	c := ToolInvocationContext(wire.plain)
	if !jsonx.IsAbsent(wire.Arguments) {
		if err := json.Unmarshal(wire.Arguments, &c.Arguments); err != nil {
			return nil, fmt.Errorf("decoding tool invocation context: arguments: %w", err)
		}
		c.RawArguments = wire.Arguments
	}
	return &c, nil
}

// ToolContextFromRequest finds the tool invocation context in an invocation:
// Data[bindingName] (matched case-insensitively), falling back to any single
// Data entry when bindingName is empty.
func ToolContextFromRequest(req *InvocationRequest, bindingName string) (*ToolInvocationContext, error) {
	raw, ok := LookupFoldMap(req.Data, bindingName)
	if !ok && bindingName == "" && len(req.Data) == 1 {
		for _, v := range req.Data {
			raw, ok = v, true
		}
	}
	if !ok {
		return nil, fmt.Errorf("invocation has no %q entry in Data", bindingName)
	}
	return decodeToolInvocationContext(raw, req.Owned)
}
