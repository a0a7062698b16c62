package clientreq

import (
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// newSealer returns a sealer of a fixed 32-byte key.
func newSealer(t testing.TB) *auth.Sealer {
	t.Helper()
	s, err := auth.NewSealer([]byte("0123456789abcdef0123456789abcdef"))
	require.NoError(t, err)
	return s
}

// FuzzOpenRequestState: opening any text as a request state, or any
// payload sealed with the key, never panics, and only a state of the call
// and of its client opens; a state opens once.
func FuzzOpenRequestState(f *testing.F) {
	testSealer := newSealer(f)
	states := NewStates(testSealer, owner.Limit{}, nil, slog.New(slog.DiscardHandler))
	args := json.RawMessage(`{"x":1}`)
	id := Identity{Method: "tools/call", Name: "echo", Owner: "key:abc", Digest: func() string { return wire.ArgumentsDigest(args) }}
	genuine, err := json.Marshal(State{Method: id.Method, Name: id.Name, Digest: id.Digest(), Owner: string(id.Owner), Nonce: "n1",
		Answers: map[string]json.RawMessage{"k": json.RawMessage(`{"action":"accept"}`)}})
	require.NoError(f, err)
	token, err := testSealer.Seal(StatePurpose, genuine, InputStateLifetime)
	require.NoError(f, err)
	f.Add(token, genuine)
	f.Add("", []byte(`{"m":"tools/call","n":"echo","d":"`+id.Digest()+`","o":"key:abc"}`))
	f.Add(token+"A", []byte(`{"m":"tools/call","n":"echo","d":"`+id.Digest()+`","o":"key:abd","j":"x"}`))
	f.Add("AQ", []byte(`[]`))
	f.Fuzz(func(t *testing.T, text string, payload []byte) {
		if st, _, problem := states.Open(text, id); problem == "" && st.Nonce != "n1" {
			t.Fatalf("a text not sealed here opened: %q (%+v)", text, st)
		}
		sealed, err := testSealer.Seal(StatePurpose, payload, time.Hour)
		require.NoError(t, err)
		st, exp, problem := states.Open(sealed, id)
		if problem != "" {
			return
		}
		if st.Owner != string(id.Owner) || st.Method != id.Method || st.Name != id.Name || st.Digest != id.Digest() || st.Nonce == "" {
			t.Fatalf("a state of another call or client opened: %+v", st)
		}
		l := newLedger(owner.Limit{})
		require.NoError(t, l.use(st.Nonce, id.Owner, exp))
		require.ErrorIs(t, l.use(st.Nonce, id.Owner, exp), ErrStateUsed)
	})
}

// TestStateLedgerBoundsAndForgets: the ledger refuses an owner past its
// bound until its states expire, and forgets expired ones.
func TestStateLedgerBoundsAndForgets(t *testing.T) {
	l := newLedger(owner.Limit{PerOwner: 2, Global: 3})
	now := time.Unix(1_000_000, 0)
	l.now = func() time.Time { return now }
	exp := now.Add(time.Hour)
	require.NoError(t, l.use("a1", "a", exp))
	require.NoError(t, l.use("a2", "a", exp))
	var le *owner.LimitError
	require.ErrorAs(t, l.use("a3", "a", exp), &le)
	assert.False(t, le.Global)
	require.NoError(t, l.use("b1", "b", exp))
	require.ErrorAs(t, l.use("c1", "c", exp), &le)
	assert.True(t, le.Global)

	now = exp // everything expired: forgotten on the next use
	require.NoError(t, l.use("a3", "a", now.Add(time.Hour)))
	assert.Len(t, l.used, 1)
	assert.Equal(t, int64(1), l.count.Total())
}
