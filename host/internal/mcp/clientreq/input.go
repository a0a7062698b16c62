package clientreq

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/ids"
	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
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
// remembers the states that opened until they expire (ledger), and,
// with a StateLedger, once on every instance that shares it. A retry
// without a state is served with the answers it carries.
//
// A shared record can lose what it holds (a Redis server or Azurite
// restarted empty): each record therefore carries an epoch, a random id
// made once when the record is found without one, and a state holds the
// epoch current when it was given. A state opens only while its epoch is
// the record's: one given before the loss is refused, as its use may
// have been forgotten.

// Members of a retried call.
const (
	ParamInputResponses = "inputResponses"
	ParamRequestState   = "requestState"
)

// Call is what a request state is bound to: the method, the name and the
// arguments of the call, and the client that made it.
type Call struct {
	Method, Name string
	Args         json.RawMessage
	Owner        owner.ID
}

// digest names the arguments whatever their spacing and member order,
// without decoding them (see wire.ArgumentsDigest).
func (c Call) digest() string { return wire.ArgumentsDigest(c.Args) }

// identity is c as a request state is checked against it.
func (c Call) identity() Identity {
	return Identity{Method: c.Method, Name: c.Name, Owner: c.Owner, Digest: c.digest}
}

// ProblemStateUnchecked: the shared record of used states did not answer.
const ProblemStateUnchecked = "Internal error: requestState could not be checked as unused; call again with it."

// ReadInput reads the inputResponses and requestState of a modern call's
// params; problem is the message when they are wrong, with its code
// (-32602, or -32603 when the shared record of used states failed). A
// state that opens is spent once everything else is right.
func (s *States) ReadInput(ctx context.Context, params []byte, c Call) (in *Input, code int, problem string) {
	in, problem = s.readInput(ctx, params, c)
	code = jsonrpc.CodeInvalidParams
	if problem == ProblemStateUnchecked {
		code = jsonrpc.CodeInternalError
	}
	return in, code, problem
}

func (s *States) readInput(ctx context.Context, params []byte, c Call) (in *Input, problem string) {
	answers := map[string]json.RawMessage{}
	var st *State
	var expires time.Time
	if raw := wire.Member(params, ParamRequestState); raw != nil && raw[0] != 'n' {
		token, ok := wire.StringValue(raw)
		if !ok {
			return nil, "Invalid params: requestState must be a string."
		}
		if st, expires, problem = s.Open(token, c.identity()); problem != "" {
			return nil, problem
		}
		for k, v := range st.Answers {
			answers[k] = v
		}
	}
	if raw := wire.Member(params, ParamInputResponses); raw != nil && raw[0] != 'n' {
		if raw[0] != '{' {
			return nil, "Invalid params: inputResponses must be an object of the answers by key."
		}
		it := wire.Members(raw)
		for key, val, ok := it.Next(); ok; key, val, ok = it.Next() {
			k, _ := wire.StringValue(key)
			if val[0] != '{' {
				return nil, "Invalid params: inputResponses['" + jsonx.SafeText(k) + "'] must be an object (the result of the request)."
			}
			answers[k] = CompactJSON(val)
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
		if err := s.Spend(ctx, st, c.Owner, expires); err != nil {
			switch {
			case errors.Is(err, ErrStateUsed):
				return nil, "Invalid params: requestState was used already (each opens once); call again with the latest one, or without it and every answer in inputResponses."
			case errors.Is(err, ErrEpochChanged):
				s.log.Warn("mcp: refused a request state given before the record of used request states was reset")
				return nil, "Invalid params: the server's record of used states was reset since this requestState was given, so it cannot be checked as unused; start the call again, without requestState."
			case errors.Is(err, ErrStateUnchecked):
				s.log.Error("mcp: recording a used request state failed", "error", err)
				return nil, ProblemStateUnchecked
			}
			return nil, "Invalid params: " + err.Error() + "; call again without requestState and every answer in inputResponses."
		}
	}
	if len(answers) == 0 {
		return nil, ""
	}
	return &Input{Answers: answers, Encoded: encoded}, ""
}

// CompactJSON returns a copy of valid JSON on one line.
func CompactJSON(v []byte) json.RawMessage {
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return bytes.Clone(v)
	}
	return b.Bytes()
}

// InputRequired makes the input-required result of a modern call whose
// Notifier n asked the client something (call it after n.End): the
// requests, a request state given for c, and meta as its _meta. It
// returns nil, nil when n asked nothing; an error when the state could not
// be given.
func (s *States) InputRequired(ctx context.Context, n *Notifier, c Call, meta []byte) ([]byte, error) {
	pending := n.TakePending()
	if len(pending) == 0 {
		return nil, nil
	}
	st := State{Method: c.Method, Name: c.Name, Digest: c.digest(), Owner: string(c.Owner), Nonce: ids.Random(ids.LowerAlnum, 22)}
	if in := n.Answers(); in != nil {
		st.Answers = in.Answers
	}
	token, err := s.Give(ctx, &st)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString(`{"resultType":"input_required","inputRequests":{`)
	for i, r := range pending {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(metadata.AppendJSONString(b.AvailableBuffer(), r.Key))
		b.WriteString(`:{"method":`)
		b.Write(metadata.AppendJSONString(b.AvailableBuffer(), r.Method))
		b.WriteString(`,"params":`)
		b.Write(r.Params)
		b.WriteByte('}')
	}
	b.WriteString(`},"requestState":`)
	b.Write(metadata.AppendJSONString(b.AvailableBuffer(), token))
	b.WriteString(`,"_meta":`)
	b.Write(meta)
	b.WriteByte('}')
	return b.Bytes(), nil
}
