package clientreq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
)

// StatePurpose is what request states are sealed for.
const StatePurpose = "mcp-input-state"

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

// State is the JSON sealed in a requestState.
type State struct {
	Method string `json:"m"`
	Name   string `json:"n"`
	Digest string `json:"d"`
	// Owner is the client the state was given to (Exchange.Owner of its request);
	// Nonce names the state, which opens once.
	Owner string `json:"o"`
	Nonce string `json:"j"`
	// Epoch is the shared record's epoch when the state was given ("" when
	// the instances share none).
	Epoch   string                     `json:"e,omitempty"`
	Answers map[string]json.RawMessage `json:"a,omitempty"`
}

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

// DefaultEpochRefresh is how long an instance gives states the epoch it read
// last, before it reads the record's again: one storage request per 10 s
// at most, only while states are given. A Spend here that finds another
// epoch makes this instance read it again at once; states given by others
// with the old one within the 10 s are refused when used.
const DefaultEpochRefresh = 10 * time.Second

// epochCache is the shared record's epoch as this instance read it last.
type epochCache struct {
	mu      sync.Mutex
	epoch   string
	readAt  time.Time
	refresh time.Duration // see DefaultEpochRefresh
}

// States gives, opens and spends the request states of one endpoint: it
// owns the key they are sealed with, the states that opened here and the
// shared record of those that opened anywhere.
type States struct {
	sealer *auth.Sealer
	used   *ledger     // the request states that opened here
	spent  StateLedger // and on every instance sharing it; nil: none
	epoch  epochCache  // spent's epoch, as read last
	log    *slog.Logger
}

// NewStates returns the states sealed with sealer, remembered as used
// here within used (0 bounds mean DefaultUsedInputStates) and, when spent
// is not nil, in the record every instance shares.
func NewStates(sealer *auth.Sealer, used owner.Limit, spent StateLedger, log *slog.Logger) *States {
	return &States{sealer: sealer, used: newLedger(used), spent: spent, epoch: epochCache{refresh: DefaultEpochRefresh}, log: log}
}

// SetEpochRefresh sets how long an epoch read serves the states given
// (DefaultEpochRefresh when not set; a test makes it 0).
func (s *States) SetEpochRefresh(d time.Duration) {
	s.epoch.mu.Lock()
	s.epoch.refresh = d
	s.epoch.mu.Unlock()
}

// Give seals st, with the shared record's epoch when there is one, and
// returns the token the client sends back.
func (s *States) Give(ctx context.Context, st *State) (string, error) {
	var err error
	if s.spent != nil {
		st.Epoch, err = s.stateEpoch(ctx)
	}
	var data []byte
	if err == nil {
		data, err = json.Marshal(st)
	}
	if err == nil && len(data) > MaxInputResponseBytes+maxStateExtra {
		err = fmt.Errorf("the state has %d bytes, more than a state may have", len(data))
	}
	if err != nil {
		return "", err
	}
	return s.sealer.Seal(StatePurpose, data, InputStateLifetime)
}

// Identity is what a request state is bound to: the method, the name and
// the digest of the arguments of the call (computed only when needed), and
// the client that made it.
type Identity struct {
	Method, Name string
	Owner        owner.ID
	Digest       func() string
}

// stateEpoch returns the epoch to seal into a state given now: the one
// read within epochRefresh, else the record's (read within spendTimeout).
// When the record does not answer, the epoch read last serves (a Spend
// checks it anyway); without one, the error.
func (s *States) stateEpoch(ctx context.Context) (string, error) {
	c := &s.epoch
	c.mu.Lock()
	epoch, readAt, refresh := c.epoch, c.readAt, c.refresh
	c.mu.Unlock()
	if epoch != "" && time.Since(readAt) < refresh {
		return epoch, nil
	}
	ctx, cancel := context.WithTimeout(ctx, spendTimeout)
	defer cancel()
	read, err := s.spent.Epoch(ctx)
	if err != nil {
		if epoch != "" {
			s.log.Warn("mcp: reading the epoch of the record of used request states failed; giving the one read last", "error", err)
			return epoch, nil
		}
		return "", fmt.Errorf("reading the epoch of the record of used request states: %w", err)
	}
	s.noteEpoch(read)
	return read, nil
}

// noteEpoch remembers epoch as the record's now ("" forgets it: the next
// state given reads it again).
func (s *States) noteEpoch(epoch string) {
	s.epoch.mu.Lock()
	defer s.epoch.mu.Unlock()
	s.epoch.epoch, s.epoch.readAt = epoch, time.Now()
}

// spendTimeout bounds recording a state in Options.SpentStates.
const spendTimeout = 10 * time.Second

// Open opens a request state and checks that it belongs to the call id:
// problem is the -32602 message when it does not. It spends nothing.
func (s *States) Open(token string, id Identity) (st *State, expires time.Time, problem string) {
	data, expires, err := s.sealer.OpenSized(StatePurpose, token, MaxInputResponseBytes+maxStateExtra)
	if errors.Is(err, auth.ErrExpiredToken) {
		return nil, time.Time{}, "Invalid params: State has expired; call again without it."
	}
	st = &State{}
	if err != nil || json.Unmarshal(data, st) != nil {
		return nil, time.Time{}, "Invalid params: State failed its integrity check: it was altered or comes from another server."
	}
	switch {
	case st.Nonce == "":
		return nil, time.Time{}, "Invalid params: State comes from an earlier version of this server; call again without it."
	case st.Owner != string(id.Owner):
		return nil, time.Time{}, "Invalid params: State was given to another client (another key, session or address); call again without it."
	case st.Method != id.Method || st.Name != id.Name || st.Digest != id.Digest():
		return nil, time.Time{}, "Invalid params: State belongs to another request (another method, name or arguments)."
	}
	return st, expires, ""
}

// ErrStateUsed: a request state that opened once before.
var ErrStateUsed = errors.New("the request state was used already")

// ErrStateUnchecked: the shared record of used states failed.
var ErrStateUnchecked = errors.New("the request state could not be checked")

// Spend spends the state st of id on this instance, then in the
// shared record when there is one. A shared record that fails gives the
// state back here, so that the client may send it again; one whose epoch
// changed refuses it (ErrEpochChanged), and the next state given reads
// the new epoch.
func (s *States) Spend(ctx context.Context, st *State, id owner.ID, expires time.Time) error {
	nonce := st.Nonce
	if err := s.used.use(nonce, id, expires); err != nil {
		return err
	}
	if s.spent == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, spendTimeout)
	defer cancel()
	first, err := s.spent.Spend(ctx, nonce, st.Epoch, expires)
	switch {
	case errors.Is(err, ErrEpochChanged):
		s.noteEpoch("")
		return err
	case err != nil:
		s.used.forget(nonce)
		return fmt.Errorf("%w: %w", ErrStateUnchecked, err)
	case !first:
		return ErrStateUsed
	}
	return nil
}

// ledger remembers the request states that opened, until they
// expire, so that each opens once on this instance. It counts them per
// owner against a limit, so that one client cannot fill it.
type ledger struct {
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

func newLedger(l owner.Limit) *ledger {
	if l.PerOwner <= 0 {
		l.PerOwner = DefaultUsedInputStates.PerOwner
	}
	if l.Global <= 0 {
		l.Global = DefaultUsedInputStates.Global
	}
	return &ledger{used: map[string]usedState{}, count: owner.NewCounter("input-required rounds within the last hour", "", l), now: time.Now}
}

// use spends the state nonce of id, which expires at expires: ErrStateUsed
// when it was spent before, a *owner.LimitError when id (or everyone)
// spent too many that have not expired yet.
func (l *ledger) use(nonce string, id owner.ID, expires time.Time) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if now.After(l.sweepAt) {
		l.sweep(now)
		l.sweepAt = now.Add(time.Minute)
	}
	if u, ok := l.used[nonce]; ok && now.Before(u.expires) {
		return ErrStateUsed
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
func (l *ledger) forget(nonce string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if u, ok := l.used[nonce]; ok {
		u.release()
		delete(l.used, nonce)
	}
}

// sweep forgets the states that expired: they no longer open anyway.
func (l *ledger) sweep(now time.Time) {
	for nonce, u := range l.used {
		if !now.Before(u.expires) {
			u.release()
			delete(l.used, nonce)
		}
	}
}
