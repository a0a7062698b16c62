package metadata

import (
	"encoding/json"
	"fmt"
)

// Completions (completion/complete) are a funcmcp feature: the Azure
// Functions MCP extension (1.6) neither advertises the completions
// capability nor answers completion/complete, and never reads
// [KeyCompletions] or sends [HeaderMethod]. Under it, declared completions
// are simply not offered.
//
// # function.json
//
// A prompt trigger, or the trigger of a resource template, may carry
// [KeyCompletions]: a string holding a JSON object with one member per
// argument (template variable) that has completions, in declaration order:
//
//	"completions": "{\"city\":{\"values\":[\"Paris\",\"Park City\"]},\"style\":{\"dynamic\":true}}"
//
// {"values":[…]} is a fixed list: the host answers from it without asking
// the worker (binding.CompleteValues is the one rule: the values that start
// with the typed text, compared case-insensitively, in declared order, at
// most [MaxCompletionValues], with total and hasMore). {"dynamic":true}
// means the worker computes the values.
//
// # Asking the worker
//
// For a dynamic completion the host POSTs to the function that serves the
// prompt or template, as for an invocation, with one extra header:
//
//	POST /{function}
//	X-Funcmcp-Method: completion/complete
//	Content-Type: application/json
//
//	{"Data":{"context":<CompletionContext>},"Metadata":{}}
//
// The context is a [CompletionContext] (it may be JSON-encoded as a string
// any number of times, as invocation contexts): the MCP request's ref and
// argument, the other arguments already given (context.arguments), and the
// session, client and transport of the request. The worker answers 200 with
// the custom-handler reply {"Outputs":{},"Logs":[…],"ReturnValue":"<the
// CompleteResult as a JSON string>"}, for example
//
//	"ReturnValue": "{\"completion\":{\"values\":[\"Paris\"],\"total\":1,\"hasMore\":false}}"
//
// An argument without completions gets {"completion":{"values":[]}}. A
// failure is a [FailureReply] (HTTP 500). The worker answers fixed lists too,
// with the same rule, so a host may also ask it for those.
const (
	// HeaderMethod names a funcmcp request that is not an invocation; the
	// Functions host never sends it.
	HeaderMethod = "X-Funcmcp-Method"
	// MethodComplete is the [HeaderMethod] value of a completion request.
	MethodComplete = "completion/complete"
)

// MaxCompletionValues is the most values one completion result holds (the
// MCP limit).
const MaxCompletionValues = 100

// Completion reference types (MCP CompleteRequest ref.type).
const (
	RefPrompt   = "ref/prompt"
	RefResource = "ref/resource"
)

// CompletionSource is where the completion values of one prompt argument
// or template variable come from: a fixed list, or the worker (Dynamic).
type CompletionSource struct {
	// Name is the argument or template variable.
	Name string
	// Values is the fixed list (nil when Dynamic).
	Values []string
	// Dynamic says the worker computes the values.
	Dynamic bool
}

// EncodeCompletions returns the [KeyCompletions] text of sources, in their
// order: {"<name>":{"values":[…]}|{"dynamic":true},…}.
func EncodeCompletions(sources []CompletionSource) (string, error) {
	obj := &Binding{} // an ordered JSON object
	for _, s := range sources {
		var (
			data []byte
			err  error
		)
		if s.Dynamic {
			data = []byte(`{"dynamic":true}`)
		} else {
			values := s.Values
			if values == nil {
				values = []string{}
			}
			data, err = Marshal(struct {
				Values []string `json:"values"`
			}{values})
			if err != nil {
				return "", fmt.Errorf("encoding the completions of %q: %w", s.Name, err)
			}
		}
		obj.set(s.Name, data)
	}
	data, _ := obj.MarshalJSON()
	return string(data), nil
}

// CompletionContext is the trigger value of a completion request.
type CompletionContext struct {
	Ref      CompletionRef      `json:"ref"`
	Argument CompletionArgument `json:"argument"`
	// Context holds the arguments (template variables) already given.
	Context    *CompletionArguments `json:"context,omitempty"`
	SessionID  string               `json:"sessionid,omitempty"`
	ClientInfo *ClientInfo          `json:"clientinfo,omitempty"`
	Transport  *Transport           `json:"transport,omitempty"`
}

// CompletionRef says what is being completed: a prompt ([RefPrompt], Name)
// or a resource template ([RefResource], URI: the template).
type CompletionRef struct {
	Type string `json:"type"`
	Name string `json:"name,omitempty"`
	URI  string `json:"uri,omitempty"`
}

// CompletionArgument is the argument being completed and what the user has
// typed so far.
type CompletionArgument struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// CompletionArguments are the other arguments already resolved.
type CompletionArguments struct {
	Arguments map[string]string `json:"arguments,omitempty"`
}

// CompleteResult is the MCP completion/complete result.
type CompleteResult struct {
	Completion CompletionValues `json:"completion"`
}

// CompletionValues are the completion values of one argument.
type CompletionValues struct {
	// Values holds at most [MaxCompletionValues] values; never nil when
	// encoded.
	Values []string `json:"values"`
	// Total is the number of values there are, when known.
	Total *int `json:"total,omitempty"`
	// HasMore says there are more values than Values holds.
	HasMore bool `json:"hasMore"`
}

// MarshalJSON writes values as [] when there are none.
func (v CompletionValues) MarshalJSON() ([]byte, error) {
	type plain CompletionValues
	if v.Values == nil {
		v.Values = []string{}
	}
	return Marshal(plain(v))
}

// DecodeCompletionContext decodes a completion request's trigger value: the
// context as a JSON object, or that object JSON-encoded as a string once or
// more.
func DecodeCompletionContext(raw []byte) (*CompletionContext, error) {
	var c CompletionContext
	if err := decodeContext(raw, &c); err != nil {
		return nil, fmt.Errorf("decoding completion context: %w", err)
	}
	return &c, nil
}

// decodeContext decodes a trigger value, unwrapping any depth of JSON string
// encoding, into v.
func decodeContext(raw []byte, v any) error {
	inner, err := UnwrapJSONString(raw)
	if err != nil {
		return err
	}
	if len(inner) == 0 || inner[0] != '{' {
		return errNotJSONObject
	}
	return json.Unmarshal(inner, v)
}
