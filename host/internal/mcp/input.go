package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/internal/jsonx"
)

// The input-required flow of MCP 2026-07-28 (SEP-2322, multi round-trip
// requests). A call that needs the client's input ends with
//
//	{"resultType":"input_required",
//	 "inputRequests":{"<key>":{"method":…,"params":…},…},
//	 "requestState":"<sealed>", "_meta":{…serverInfo}}
//
// and the client calls again with the same name and arguments, adding
// "inputResponses" (the answers by key) and the "requestState" it got. The
// state is sealed with the host's key (any instance sharing the key opens
// it; nothing is kept between the rounds) and holds what the call is (the
// method, the tool or prompt name, a digest of the arguments) and the
// answers of the earlier rounds, so that each round runs the function again
// with every answer so far. A state that does not open (altered, expired,
// sealed by another key) or belongs to another call is refused with -32602.
// A retry without a state is served with the answers it carries.

// inputStatePurpose is what request states are sealed for.
const inputStatePurpose = "mcp-input-state"

// InputStateLifetime is how long a request state is accepted.
const InputStateLifetime = time.Hour

// MaxInputResponseBytes bounds the answers of one call (those of the
// request state and the new ones together): they travel to the worker in a
// header and back to the client in the next state.
const MaxInputResponseBytes = 256 << 10

// Members of a retried call.
const (
	paramInputResponses = "inputResponses"
	paramRequestState   = "requestState"
)

// requestState is the JSON sealed in a requestState.
type requestState struct {
	Method  string                     `json:"m"`
	Name    string                     `json:"n"`
	Digest  string                     `json:"d"`
	Answers map[string]json.RawMessage `json:"a,omitempty"`
}

// inputState is what a call knows of the client's answers.
type inputState struct {
	answers map[string]json.RawMessage
	encoded json.RawMessage // answers as one object, nil when none
}

func (in *inputState) get(key string) (json.RawMessage, bool) {
	if in == nil {
		return nil, false
	}
	a, ok := in.answers[key]
	return a, ok
}

// callIdentity is what a request state is bound to: the method, the name
// and the arguments of the call.
type callIdentity struct {
	method, name string
	args         json.RawMessage
}

// digest names the arguments whatever their spacing and member order,
// without decoding them (see argumentsDigest).
func (c callIdentity) digest() string { return argumentsDigest(c.args) }

// readInput reads the inputResponses and requestState of a modern call;
// problem is the -32602 message when they are wrong.
func (h *handler) readInput(params []byte, id callIdentity) (in *inputState, problem string) {
	answers := map[string]json.RawMessage{}
	size := 0
	if raw := member(params, paramRequestState); raw != nil && raw[0] != 'n' {
		token, ok := stringValue(raw)
		if !ok {
			return nil, "Invalid params: requestState must be a string."
		}
		data, err := h.sealer.Open(inputStatePurpose, token)
		if errors.Is(err, auth.ErrExpiredToken) {
			return nil, "Invalid params: requestState has expired; call again without it."
		}
		var st requestState
		if err != nil || json.Unmarshal(data, &st) != nil {
			return nil, "Invalid params: requestState failed its integrity check: it was altered or comes from another server."
		}
		if st.Method != id.method || st.Name != id.name || st.Digest != id.digest() {
			return nil, "Invalid params: requestState belongs to another request (another method, name or arguments)."
		}
		for k, v := range st.Answers {
			answers[k] = v
			size += len(k) + len(v)
		}
	}
	if raw := member(params, paramInputResponses); raw != nil && raw[0] != 'n' {
		if raw[0] != '{' {
			return nil, "Invalid params: inputResponses must be an object of the answers by key."
		}
		it := members(raw)
		for key, val, ok := it.next(); ok; key, val, ok = it.next() {
			k, _ := stringValue(key)
			if val[0] != '{' {
				return nil, "Invalid params: inputResponses['" + jsonx.SafeText(k) + "'] must be an object (the result of the request)."
			}
			if old, ok := answers[k]; ok {
				size -= len(k) + len(old)
			}
			answers[k] = compactJSON(val)
			size += len(k) + len(val)
		}
	}
	if size > MaxInputResponseBytes {
		return nil, "Invalid params: the answers of this call exceed " + strconv.Itoa(MaxInputResponseBytes>>10) + " KiB."
	}
	if len(answers) == 0 {
		return nil, ""
	}
	in = &inputState{answers: answers}
	in.encoded, _ = json.Marshal(answers) // raw messages: valid, cannot fail
	return in, ""
}

// compactJSON returns a copy of valid JSON on one line.
func compactJSON(v []byte) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return bytes.Clone(v)
	}
	return b.Bytes()
}

// inputRequired answers a modern call that asked the client something with
// its input-required result, and reports whether it did. Call it after
// n.end.
func (h *handler) inputRequired(req *request, n *Notifier, id callIdentity) bool {
	pending := n.takePending()
	if len(pending) == 0 {
		return false
	}
	st := requestState{Method: id.method, Name: id.name, Digest: id.digest()}
	if n.answers != nil {
		st.Answers = n.answers.answers
	}
	data, err := json.Marshal(&st)
	var token string
	if err == nil {
		token, err = h.sealer.Seal(inputStatePurpose, data, InputStateLifetime)
	}
	if err != nil {
		h.log.Error("mcp: sealing a request state failed", "error", err)
		h.rpcError(req, CodeInternalError, "Internal error", nil)
		return true
	}
	var b bytes.Buffer
	b.WriteString(`{"resultType":"input_required","inputRequests":{`)
	for i, r := range pending {
		if i > 0 {
			b.WriteByte(',')
		}
		appendString(&b, r.key)
		b.WriteString(`:{"method":`)
		appendString(&b, r.method)
		b.WriteString(`,"params":`)
		b.Write(r.params)
		b.WriteByte('}')
	}
	b.WriteString(`},"requestState":`)
	appendString(&b, token)
	b.WriteString(`,"_meta":`)
	b.Write(h.modernReplies.metaOnly)
	b.WriteByte('}')
	req.log.setOutcome("input_required")
	h.result(req, b.Bytes())
	return true
}
