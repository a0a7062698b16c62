package oauth

import (
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// testClock is a clock a test moves by hand.
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// forged signs claims with a key of its own under the key id kid: a key
// the issuer never published.
func forged(t *testing.T, key *rsa.PrivateKey, claims jwt.MapClaims, kid string) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodRS256, claims)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(key)
	require.NoError(t, err)
	return s
}

// TestUnknownKeyIDRefreshesAfterAShortFloor: an issuer that rotates its
// key without overlap is followed within KeyRefreshEvery, even right after
// a flood of made-up key ids, and that flood costs the issuer one fetch
// per KeyRefreshEvery.
func TestUnknownKeyIDRefreshesAfterAShortFloor(t *testing.T) {
	op := testutil.StartOIDC(t)
	cfg := &Config{Issuer: op.URL, Audiences: []string{testAudience}}
	logs := &testutil.SyncBuffer{}
	v := NewVerifier(t.Context(), cfg, nil).WithLogger(slog.New(slog.NewTextHandler(logs, nil)))
	clock := &testClock{now: time.Now()}
	v.now = clock.Now
	claims := func() jwt.MapClaims { return testutil.Claims(op.URL, testAudience, "user-1") }

	_, err := v.Verify(t.Context(), op.Token(t, claims()))
	require.NoError(t, err)
	require.EqualValues(t, 1, op.JWKSServed(), "discovery fetches the keys once")

	// A flood of made-up key ids, all at once: one fetch for all of them.
	attacker, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	const flood = 40
	var wg sync.WaitGroup
	errs := make([]error, flood)
	for i := range flood {
		tok := forged(t, attacker, claims(), fmt.Sprintf("made-up-%d", i))
		wg.Go(func() { _, errs[i] = v.Verify(t.Context(), tok) })
	}
	wg.Wait()
	for _, err := range errs {
		assert.ErrorIs(t, err, ErrUnknownKey)
	}
	assert.EqualValues(t, 2, op.JWKSServed(), "a flood of unknown key ids fetches the keys once per floor")
	assert.Equal(t, 1, strings.Count(logs.String(), "; refreshing the issuer's keys"), logs.String())
	assert.Contains(t, logs.String(), `msg="unknown signing key id made-up-`)

	// The issuer restarts with a new key, the old one gone, just after
	// that flood: within the floor its tokens wait for the next fetch...
	op.Rotate(t, false)
	fresh := op.Token(t, claims())
	_, err = v.Verify(t.Context(), fresh)
	require.ErrorIs(t, err, ErrUnknownKey)
	assert.Contains(t, err.Error(), "fetched less than 5s ago")
	assert.EqualValues(t, 2, op.JWKSServed(), "no fetch within the floor")

	// ...which comes once the floor has passed: the new key is found.
	clock.Add(KeyRefreshEvery)
	id, err := v.Verify(t.Context(), fresh)
	require.NoError(t, err, "a token of the rotated key verifies once the floor has passed")
	assert.Equal(t, "user-1", id.Subject)
	assert.EqualValues(t, 3, op.JWKSServed())

	// Known keys never fetch.
	_, err = v.Verify(t.Context(), op.Token(t, claims()))
	require.NoError(t, err)
	assert.EqualValues(t, 3, op.JWKSServed())
}

// TestUnknownKeyIDLogIsCapped: the key id a log line shows is the
// client's, so it is cut and cleaned.
func TestUnknownKeyIDLogIsCapped(t *testing.T) {
	op := testutil.StartOIDC(t)
	cfg := &Config{Issuer: op.URL, Audiences: []string{testAudience}}
	logs := &testutil.SyncBuffer{}
	v := NewVerifier(t.Context(), cfg, nil).WithLogger(slog.New(slog.NewTextHandler(logs, nil)))
	attacker, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)

	kid := "evil\n\x1b[31mlevel=ERROR " + strings.Repeat("k", 4000)
	_, err = v.Verify(t.Context(), forged(t, attacker, testutil.Claims(op.URL, testAudience, "user-1"), kid))
	require.ErrorIs(t, err, ErrUnknownKey)

	line := logs.String()
	assert.Equal(t, 1, strings.Count(line, "\n"), "one line: %s", line)
	assert.Contains(t, line, "unknown signing key id evil??[31mlevel=ERROR?kkk")
	assert.NotContains(t, line, strings.Repeat("k", maxLoggedKid))
	assert.Less(t, len(line), 400)
	assert.NotContains(t, err.Error(), strings.Repeat("k", maxLoggedKid), "the refusal, which the guard logs, is cut too")
}

func TestLogKid(t *testing.T) {
	for in, want := range map[string]string{
		"":                              "",
		"abc-DEF_123":                   "abc-DEF_123",
		"a b\tc\x00é":                   "a?b?c?\x3f\x3f",
		strings.Repeat("x", 65):         strings.Repeat("x", 64) + "…",
		strings.Repeat("x", 64):         strings.Repeat("x", 64),
		"\u202eexe.txt":                 "???exe.txt",
		strings.Repeat("é", 40) + "end": strings.Repeat("??", 32) + "…",
	} {
		assert.Equal(t, want, logKid(in), "%q", in)
	}
}
