package metadata

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

var errNotJSONObject = errors.New("not a JSON object")

// ResourceInvocationContext is the trigger value of a resources/read
// invocation (the extension's Abstractions/ResourceInvocationContext.cs):
// URI is the URI the client asked for, with any template variables filled in.
type ResourceInvocationContext struct {
	URI        string      `json:"uri"`
	SessionID  string      `json:"sessionid,omitempty"`
	ClientInfo *ClientInfo `json:"clientinfo,omitempty"`
	Transport  *Transport  `json:"transport,omitempty"`
}

// PromptInvocationContext is the trigger value of a prompts/get invocation
// (the extension's Abstractions/PromptInvocationContext.cs). Arguments are
// the raw JSON values the client sent; MCP prompt arguments are strings.
type PromptInvocationContext struct {
	Name       string                     `json:"name"`
	Arguments  map[string]json.RawMessage `json:"arguments,omitempty"`
	SessionID  string                     `json:"sessionid,omitempty"`
	ClientInfo *ClientInfo                `json:"clientinfo,omitempty"`
	Transport  *Transport                 `json:"transport,omitempty"`
}

// StringArguments returns the arguments as strings, as the extension's
// prompt argument binding reads them: a JSON string gives its text, null is
// left out, any other value gives its compact JSON.
func (c *PromptInvocationContext) StringArguments() map[string]string {
	return StringArguments(c.Arguments)
}

// StringArguments is [PromptInvocationContext.StringArguments] for any
// arguments map.
func StringArguments(args map[string]json.RawMessage) map[string]string {
	out := make(map[string]string, len(args))
	for k, raw := range args {
		v := bytes.TrimSpace(raw)
		if len(v) == 0 || bytes.Equal(v, []byte("null")) {
			continue
		}
		var s string
		if v[0] == '"' && json.Unmarshal(v, &s) == nil {
			out[k] = s
			continue
		}
		var buf bytes.Buffer
		if json.Compact(&buf, v) == nil {
			out[k] = buf.String()
		} else {
			out[k] = string(v)
		}
	}
	return out
}

// DecodeResourceInvocationContext decodes a resource trigger value: the
// context as a JSON object, or that object JSON-encoded as a string once or
// more. The uri must be a non-empty string.
func DecodeResourceInvocationContext(raw []byte) (*ResourceInvocationContext, error) {
	var c ResourceInvocationContext
	if err := decodeContext(raw, &c); err != nil {
		return nil, fmt.Errorf("decoding resource invocation context: %w", err)
	}
	if c.URI == "" {
		return nil, errors.New("decoding resource invocation context: the uri is missing")
	}
	return &c, nil
}

// DecodePromptInvocationContext decodes a prompt trigger value, like
// [DecodeResourceInvocationContext].
func DecodePromptInvocationContext(raw []byte) (*PromptInvocationContext, error) {
	var c PromptInvocationContext
	if err := decodeContext(raw, &c); err != nil {
		return nil, fmt.Errorf("decoding prompt invocation context: %w", err)
	}
	return &c, nil
}

// TriggerValue returns the trigger value of an invocation: Data[bindingName]
// (matched case-insensitively), falling back to any single Data entry when
// bindingName is empty.
func TriggerValue(req *InvocationRequest, bindingName string) (json.RawMessage, error) {
	raw, ok := LookupFoldMap(req.Data, bindingName)
	if !ok && bindingName == "" && len(req.Data) == 1 {
		for _, v := range req.Data {
			raw, ok = v, true
		}
	}
	if !ok {
		return nil, fmt.Errorf("invocation has no %q entry in Data", bindingName)
	}
	return raw, nil
}

// JSON-RPC error codes a [FailureReply] may carry.
const (
	// CodeResourceNotFound: the resource does not exist (MCP).
	CodeResourceNotFound = -32002
	// CodeInvalidRequest: the request may not be made; a worker refuses
	// with it a resource or prompt whose required scopes the caller's
	// identity does not grant (Data is {"requiredScopes":[…]}).
	CodeInvalidRequest = -32600
	// CodeInvalidParams: the request's parameters are wrong (missing
	// required prompt arguments, a URI the template does not match).
	CodeInvalidParams = -32602
	// CodeInternalError: the function failed.
	CodeInternalError = -32603
	// CodeMissingRequiredClientCapability: the function needs a capability
	// the client did not declare (MCP 2026-07-28,
	// MissingRequiredClientCapabilityError). Data is
	// {"requiredCapabilities":{"<capability>":{}}}.
	CodeMissingRequiredClientCapability = -32021
)

// FailureReply is the body of a funcmcp worker's HTTP 500 reply to a
// resource, prompt or completion request that failed, and to a tool call
// that needs a client capability the client did not declare
// ([CodeMissingRequiredClientCapability]); the Functions host fails the
// invocation on any status other than 2xx, and its MCP extension answers
// the client with a JSON-RPC error. Error is the message, Code the JSON-RPC
// error code a host should answer with, Data the error's data when the
// code has any, Logs the invocation's log lines.
type FailureReply struct {
	Error string          `json:"error"`
	Code  int             `json:"code"`
	Data  json.RawMessage `json:"data,omitempty"`
	Logs  []string        `json:"Logs"`
}
