package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/ids"
	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/host/internal/owner"
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
// it; nothing of the call is kept between the rounds) and holds what the
// call is (the method, the tool or prompt name, a digest of the arguments),
// the client it was given to (its owner) and the answers of the earlier
// rounds, so that each round runs the function again with every answer so
// far. A state that does not open (altered, expired, sealed by another
// key), belongs to another call or was given to another client is refused
// with -32602. Each state opens once on an instance: the instance
// remembers the states that opened until they expire (stateLedger), and,
// with Options.SpentStates, once on every instance that shares it. A
// retry without a state is served with the answers it carries.
//
// A shared record can lose what it holds (a Redis server or Azurite
// restarted empty): each record therefore carries an epoch, a random id
// made once when the record is found without one, and a state holds the
// epoch current when it was given. A state opens only while its epoch is
// the record's: one given before the loss is refused, as its use may
// have been forgotten.

// Members of a retried call.
const (
	paramInputResponses = "inputResponses"
	paramRequestState   = "requestState"
)

// The request states themselves (sealing, opening, spending once) are
// package clientreq's States; these names keep the package's spelling.
const (
	InputStateLifetime    = clientreq.InputStateLifetime
	MaxInputResponseBytes = clientreq.MaxInputResponseBytes
)

// DefaultUsedInputStates bounds the request states this handler remembers
// as used (see clientreq.DefaultUsedInputStates).
var DefaultUsedInputStates = clientreq.DefaultUsedInputStates

// StateLedger records the request states that opened where several
// instances see them (see clientreq.StateLedger).
type StateLedger = clientreq.StateLedger

// ErrEpochChanged is the error of StateLedger.Spend for a state given in
// an epoch that is no longer the record's.
var ErrEpochChanged = clientreq.ErrEpochChanged

// inputState is what a call knows of the client's answers.
type inputState = clientreq.Input

// callIdentity is what a request state is bound to: the method, the name
// and the arguments of the call, and the client that made it.
type callIdentity struct {
	method, name string
	args         json.RawMessage
	owner        owner.ID
}

// digest names the arguments whatever their spacing and member order,
// without decoding them (see wire.ArgumentsDigest).
func (c callIdentity) digest() string { return wire.ArgumentsDigest(c.args) }

// identity is c as package clientreq checks a request state against it.
func (c callIdentity) identity() clientreq.Identity {
	return clientreq.Identity{Method: c.method, Name: c.name, Owner: c.owner, Digest: c.digest}
}

// readInput reads the inputResponses and requestState of a modern call;
// problem is the message when they are wrong, with its code (-32602, or
// -32603 when the shared record of used states failed). A state that opens
// is spent once everything else is right.
func (h *handler) readInput(ctx context.Context, params []byte, id callIdentity) (in *inputState, code int, problem string) {
	in, problem = h.readInputState(ctx, params, id)
	code = CodeInvalidParams
	if problem == problemStateUnchecked {
		code = CodeInternalError
	}
	return in, code, problem
}

// problemStateUnchecked: the shared record of used states did not answer.
const problemStateUnchecked = "Internal error: requestState could not be checked as unused; call again with it."

func (h *handler) readInputState(ctx context.Context, params []byte, id callIdentity) (in *inputState, problem string) {
	answers := map[string]json.RawMessage{}
	var st *clientreq.State
	var expires time.Time
	if raw := member(params, paramRequestState); raw != nil && raw[0] != 'n' {
		token, ok := stringValue(raw)
		if !ok {
			return nil, "Invalid params: requestState must be a string."
		}
		if st, expires, problem = h.states.Open(token, id.identity()); problem != "" {
			return nil, problem
		}
		for k, v := range st.Answers {
			answers[k] = v
		}
	}
	if raw := member(params, paramInputResponses); raw != nil && raw[0] != 'n' {
		if raw[0] != '{' {
			return nil, "Invalid params: inputResponses must be an object of the answers by key."
		}
		it := members(raw)
		for key, val, ok := it.Next(); ok; key, val, ok = it.Next() {
			k, _ := stringValue(key)
			if val[0] != '{' {
				return nil, "Invalid params: inputResponses['" + jsonx.SafeText(k) + "'] must be an object (the result of the request)."
			}
			answers[k] = compactJSON(val)
		}
	}
	var encoded []byte
	if len(answers) > 0 {
		encoded, _ = json.Marshal(answers) // raw messages: valid, cannot fail
		if len(encoded) > MaxInputResponseBytes {
			return nil, "Invalid params: the answers of this call exceed " + strconv.Itoa(MaxInputResponseBytes>>10) + " KiB."
		}
	}
	if st != nil {
		if err := h.states.Spend(ctx, st, id.owner, expires); err != nil {
			switch {
			case errors.Is(err, clientreq.ErrStateUsed):
				return nil, "Invalid params: requestState was used already (each opens once); call again with the latest one, or without it and every answer in inputResponses."
			case errors.Is(err, ErrEpochChanged):
				h.log.Warn("mcp: refused a request state given before the record of used request states was reset")
				return nil, "Invalid params: the server's record of used states was reset since this requestState was given, so it cannot be checked as unused; start the call again, without requestState."
			case errors.Is(err, clientreq.ErrStateUnchecked):
				h.log.Error("mcp: recording a used request state failed", "error", err)
				return nil, problemStateUnchecked
			}
			return nil, "Invalid params: " + err.Error() + "; call again without requestState and every answer in inputResponses."
		}
	}
	if len(answers) == 0 {
		return nil, ""
	}
	return &inputState{Answers: answers, Encoded: encoded}, ""
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
	pending := n.TakePending()
	if len(pending) == 0 {
		return false
	}
	st := clientreq.State{Method: id.method, Name: id.name, Digest: id.digest(), Owner: string(id.owner), Nonce: ids.Random(ids.LowerAlnum, 22)}
	if in := n.Answers(); in != nil {
		st.Answers = in.Answers
	}
	token, err := h.states.Give(req.r.Context(), &st)
	if err != nil {
		h.log.Error("mcp: giving a request state failed", "error", err)
		h.rpcError(req, CodeInternalError, "Internal error", nil)
		return true
	}
	var b bytes.Buffer
	b.WriteString(`{"resultType":"input_required","inputRequests":{`)
	for i, r := range pending {
		if i > 0 {
			b.WriteByte(',')
		}
		appendString(&b, r.Key)
		b.WriteString(`:{"method":`)
		appendString(&b, r.Method)
		b.WriteString(`,"params":`)
		b.Write(r.Params)
		b.WriteByte('}')
	}
	b.WriteString(`},"requestState":`)
	appendString(&b, token)
	b.WriteString(`,"_meta":`)
	b.Write(h.modernReplies.metaOnly)
	b.WriteByte('}')
	req.setOutcome("input_required")
	h.result(req, b.Bytes())
	return true
}
