package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/ids"
	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
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

// inputStatePurpose is what request states are sealed for.
const inputStatePurpose = "mcp-input-state"

// InputStateLifetime is how long a request state is accepted.
const InputStateLifetime = time.Hour

// MaxInputResponseBytes bounds the answers of one call (those of the
// request state and the new ones together), as one JSON object: they
// travel to the worker in a header and back to the client in the next
// state.
const MaxInputResponseBytes = 256 << 10

// maxStateExtra bounds what a request state holds besides the answers:
// the method, the name, the digest, the owner, the nonce and the JSON
// around them. A state opens when its payload is at most
// MaxInputResponseBytes + maxStateExtra.
const maxStateExtra = 16 << 10

// DefaultUsedInputStates bounds the request states this handler remembers
// as used (each until it expires), per owner and in all, when
// Options.UsedInputStates leaves a bound 0.
var DefaultUsedInputStates = owner.Limit{PerOwner: 4096, Global: 65536}

// Members of a retried call.
const (
	paramInputResponses = "inputResponses"
	paramRequestState   = "requestState"
)

// requestState is the JSON sealed in a requestState.
type requestState struct {
	Method string `json:"m"`
	Name   string `json:"n"`
	Digest string `json:"d"`
	// Owner is the client the state was given to (owner.Of of its request);
	// Nonce names the state, which opens once.
	Owner string `json:"o"`
	Nonce string `json:"j"`
	// Epoch is the shared record's epoch when the state was given ("" when
	// the instances share none).
	Epoch   string                     `json:"e,omitempty"`
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
// and the arguments of the call, and the client that made it.
type callIdentity struct {
	method, name string
	args         json.RawMessage
	owner        owner.ID
}

// digest names the arguments whatever their spacing and member order,
// without decoding them (see wire.ArgumentsDigest).
func (c callIdentity) digest() string { return wire.ArgumentsDigest(c.args) }

// StateLedger records the request states that opened where several
// instances see them (a table, a Redis server they share).
type StateLedger interface {
	// Epoch returns the id of the record's epoch, making one (exactly one
	// of the instances asking at once does) when the record has none:
	// when it is new, or lost what it held.
	Epoch(ctx context.Context) (string, error)
	// Spend records the state named key (letters and digits), which
	// expires at expires and was given in epoch, and reports whether this
	// was its first record: false when it opened before, on any instance.
	// It fails with ErrEpochChanged when the record's epoch is not epoch
	// (or it has none) once the state is recorded.
	Spend(ctx context.Context, key, epoch string, expires time.Time) (first bool, err error)
}

// ErrEpochChanged is the error of StateLedger.Spend for a state given in
// an epoch that is no longer the record's: the record lost what it held
// since, and may have forgotten that the state was used. It is the
// error of the Azure table's (tasks.AzureStates) too.
var ErrEpochChanged = tasks.ErrStateEpochChanged

// epochRefresh is how long an instance gives states the epoch it read
// last, before it reads the record's again: one storage request per 10 s
// at most, only while states are given. A Spend here that finds another
// epoch makes this instance read it again at once; states given by others
// with the old one within the 10 s are refused when used.
var epochRefresh = 10 * time.Second

// epochCache is the shared record's epoch as this instance read it last.
type epochCache struct {
	mu     sync.Mutex
	epoch  string
	readAt time.Time
}

// stateEpoch returns the epoch to seal into a state given now: the one
// read within epochRefresh, else the record's (read within spendTimeout).
// When the record does not answer, the epoch read last serves (a Spend
// checks it anyway); without one, the error.
func (h *handler) stateEpoch(ctx context.Context) (string, error) {
	c := &h.epoch
	c.mu.Lock()
	epoch, readAt := c.epoch, c.readAt
	c.mu.Unlock()
	if epoch != "" && time.Since(readAt) < epochRefresh {
		return epoch, nil
	}
	ctx, cancel := context.WithTimeout(ctx, spendTimeout)
	defer cancel()
	read, err := h.spentStates.Epoch(ctx)
	if err != nil {
		if epoch != "" {
			h.log.Warn("mcp: reading the epoch of the record of used request states failed; giving the one read last", "error", err)
			return epoch, nil
		}
		return "", fmt.Errorf("reading the epoch of the record of used request states: %w", err)
	}
	h.noteEpoch(read)
	return read, nil
}

// noteEpoch remembers epoch as the record's now ("" forgets it: the next
// state given reads it again).
func (h *handler) noteEpoch(epoch string) {
	h.epoch.mu.Lock()
	defer h.epoch.mu.Unlock()
	h.epoch.epoch, h.epoch.readAt = epoch, time.Now()
}

// spendTimeout bounds recording a state in Options.SpentStates.
const spendTimeout = 10 * time.Second

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
	var st *requestState
	var expires time.Time
	if raw := member(params, paramRequestState); raw != nil && raw[0] != 'n' {
		token, ok := stringValue(raw)
		if !ok {
			return nil, "Invalid params: requestState must be a string."
		}
		if st, expires, problem = h.openRequestState(token, id); problem != "" {
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
		for key, val, ok := it.next(); ok; key, val, ok = it.next() {
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
		if err := h.spendState(ctx, st, id.owner, expires); err != nil {
			switch {
			case errors.Is(err, errStateUsed):
				return nil, "Invalid params: requestState was used already (each opens once); call again with the latest one, or without it and every answer in inputResponses."
			case errors.Is(err, ErrEpochChanged):
				h.log.Warn("mcp: refused a request state given before the record of used request states was reset")
				return nil, "Invalid params: the server's record of used states was reset since this requestState was given, so it cannot be checked as unused; start the call again, without requestState."
			case errors.Is(err, errStateUnchecked):
				h.log.Error("mcp: recording a used request state failed", "error", err)
				return nil, problemStateUnchecked
			}
			return nil, "Invalid params: " + err.Error() + "; call again without requestState and every answer in inputResponses."
		}
	}
	if len(answers) == 0 {
		return nil, ""
	}
	return &inputState{answers: answers, encoded: encoded}, ""
}

// openRequestState opens a request state and checks that it belongs to
// the call id: problem is the -32602 message when it does not. It spends
// nothing.
func (h *handler) openRequestState(token string, id callIdentity) (st *requestState, expires time.Time, problem string) {
	data, expires, err := h.sealer.OpenSized(inputStatePurpose, token, MaxInputResponseBytes+maxStateExtra)
	if errors.Is(err, auth.ErrExpiredToken) {
		return nil, time.Time{}, "Invalid params: requestState has expired; call again without it."
	}
	st = &requestState{}
	if err != nil || json.Unmarshal(data, st) != nil {
		return nil, time.Time{}, "Invalid params: requestState failed its integrity check: it was altered or comes from another server."
	}
	switch {
	case st.Nonce == "":
		return nil, time.Time{}, "Invalid params: requestState comes from an earlier version of this server; call again without it."
	case st.Owner != string(id.owner):
		return nil, time.Time{}, "Invalid params: requestState was given to another client (another key, session or address); call again without it."
	case st.Method != id.method || st.Name != id.name || st.Digest != id.digest():
		return nil, time.Time{}, "Invalid params: requestState belongs to another request (another method, name or arguments)."
	}
	return st, expires, ""
}

// errStateUsed: a request state that opened once before.
var errStateUsed = errors.New("the request state was used already")

// errStateUnchecked: the shared record of used states failed.
var errStateUnchecked = errors.New("the request state could not be checked")

// spendState spends the state st of id on this instance, then in the
// shared record when there is one. A shared record that fails gives the
// state back here, so that the client may send it again; one whose epoch
// changed refuses it (ErrEpochChanged), and the next state given reads
// the new epoch.
func (h *handler) spendState(ctx context.Context, st *requestState, id owner.ID, expires time.Time) error {
	nonce := st.Nonce
	if err := h.usedStates.use(nonce, id, expires); err != nil {
		return err
	}
	if h.spentStates == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, spendTimeout)
	defer cancel()
	first, err := h.spentStates.Spend(ctx, nonce, st.Epoch, expires)
	switch {
	case errors.Is(err, ErrEpochChanged):
		h.noteEpoch("")
		return err
	case err != nil:
		h.usedStates.forget(nonce)
		return fmt.Errorf("%w: %w", errStateUnchecked, err)
	case !first:
		return errStateUsed
	}
	return nil
}

// stateLedger remembers the request states that opened, until they
// expire, so that each opens once on this instance. It counts them per
// owner against a limit, so that one client cannot fill it.
type stateLedger struct {
	mu      sync.Mutex
	used    map[string]usedState // by nonce
	count   *owner.Counter
	sweepAt time.Time
	now     func() time.Time
}

type usedState struct {
	expires time.Time
	release func()
}

func newStateLedger(l owner.Limit) *stateLedger {
	if l.PerOwner <= 0 {
		l.PerOwner = DefaultUsedInputStates.PerOwner
	}
	if l.Global <= 0 {
		l.Global = DefaultUsedInputStates.Global
	}
	return &stateLedger{used: map[string]usedState{}, count: owner.NewCounter("input-required rounds within the last hour", "", l), now: time.Now}
}

// use spends the state nonce of id, which expires at expires: errStateUsed
// when it was spent before, a *owner.LimitError when id (or everyone)
// spent too many that have not expired yet.
func (l *stateLedger) use(nonce string, id owner.ID, expires time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.After(l.sweepAt) {
		l.sweep(now)
		l.sweepAt = now.Add(time.Minute)
	}
	if u, ok := l.used[nonce]; ok && now.Before(u.expires) {
		return errStateUsed
	}
	release, err := l.count.Take(id, 1)
	if err != nil {
		l.sweep(now)
		if release, err = l.count.Take(id, 1); err != nil {
			return err
		}
	}
	l.used[nonce] = usedState{expires: expires, release: release}
	return nil
}

// forget gives back a state that use spent, which did not open after all.
func (l *stateLedger) forget(nonce string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if u, ok := l.used[nonce]; ok {
		u.release()
		delete(l.used, nonce)
	}
}

// sweep forgets the states that expired: they no longer open anyway.
func (l *stateLedger) sweep(now time.Time) {
	for nonce, u := range l.used {
		if !now.Before(u.expires) {
			u.release()
			delete(l.used, nonce)
		}
	}
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
	st := requestState{Method: id.method, Name: id.name, Digest: id.digest(), Owner: string(id.owner), Nonce: ids.Random(ids.LowerAlnum, 22)}
	if n.answers != nil {
		st.Answers = n.answers.answers
	}
	var err error
	if h.spentStates != nil {
		st.Epoch, err = h.stateEpoch(req.r.Context())
	}
	var data []byte
	if err == nil {
		data, err = json.Marshal(&st)
	}
	if err == nil && len(data) > MaxInputResponseBytes+maxStateExtra {
		err = fmt.Errorf("the state has %d bytes, more than a state may have", len(data))
	}
	var token string
	if err == nil {
		token, err = h.sealer.Seal(inputStatePurpose, data, InputStateLifetime)
	}
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
	req.setOutcome("input_required")
	h.result(req, b.Bytes())
	return true
}
