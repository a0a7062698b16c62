package auth

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestKeysVerify(t *testing.T) {
	keys := NewKeys("master-secret", "", "system-secret")
	tests := []struct {
		name   string
		header string
		target string
		want   bool
	}{
		{"system key in header", "system-secret", "/runtime/webhooks/mcp", true},
		{"master key in header", "master-secret", "/runtime/webhooks/mcp", true},
		{"system key in code", "", "/runtime/webhooks/mcp?code=system-secret", true},
		{"wrong key", "system-secreT", "/runtime/webhooks/mcp", false},
		{"prefix of a key", "system", "/runtime/webhooks/mcp", false},
		{"key with a suffix", "system-secret0", "/runtime/webhooks/mcp", false},
		{"no key", "", "/runtime/webhooks/mcp", false},
		{"empty code", "", "/runtime/webhooks/mcp?code=", false},
		{"wrong header wins over a right code", "nope", "/runtime/webhooks/mcp?code=system-secret", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, tt.target, nil)
			if tt.header != "" {
				r.Header.Set("x-functions-key", tt.header)
			}
			assert.Equal(t, tt.want, keys.Verify(r))
		})
	}
	assert.False(t, NewKeys().Verify(httptest.NewRequest(http.MethodPost, "/?code=", nil)))
	assert.True(t, NewKeys().Empty())
	var nilKeys *Keys
	assert.False(t, nilKeys.Match("x"))
}

func TestSealOpen(t *testing.T) {
	key := make([]byte, KeySize)
	for i := range key {
		key[i] = byte(i)
	}
	s, err := NewSealer(key)
	require.NoError(t, err)
	tok, err := s.Seal("session", []byte(`{"v":"2025-06-18"}`), time.Hour)
	require.NoError(t, err)

	// Another instance with the same key opens it.
	other, err := NewSealer(key)
	require.NoError(t, err)
	got, err := other.Open("session", tok)
	require.NoError(t, err)
	assert.Equal(t, `{"v":"2025-06-18"}`, string(got))

	// Every single changed byte is refused.
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	require.NoError(t, err)
	for i := range raw {
		bad := append([]byte(nil), raw...)
		bad[i] ^= 0x01
		_, err := s.Open("session", base64.RawURLEncoding.EncodeToString(bad))
		require.ErrorIs(t, err, ErrInvalidToken, "byte %d", i)
	}
	_, err = s.Open("sse", tok)
	assert.ErrorIs(t, err, ErrInvalidToken, "another purpose")

	stranger, err := NewRandomSealer()
	require.NoError(t, err)
	_, err = stranger.Open("session", tok)
	assert.ErrorIs(t, err, ErrInvalidToken, "another key")

	for _, junk := range []string{"", "=", "!!!!", "AQ", strings.Repeat("A", MaxTokenLen+1), tok[:len(tok)-1], tok + "A"} {
		_, err := s.Open("session", junk)
		assert.ErrorIs(t, err, ErrInvalidToken, "%q", junk)
	}

	// Expiry.
	s.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	_, err = s.Open("session", tok)
	assert.ErrorIs(t, err, ErrExpiredToken)
}

func TestParseKey(t *testing.T) {
	hexKey := strings.Repeat("ab", 32)
	k, err := ParseKey(hexKey)
	require.NoError(t, err)
	assert.Len(t, k, KeySize)
	k2, err := ParseKey(base64.StdEncoding.EncodeToString(k))
	require.NoError(t, err)
	assert.Equal(t, k, k2)
	for _, bad := range []string{"", "short", strings.Repeat("zz", 32), base64.StdEncoding.EncodeToString(make([]byte, 16))} {
		_, err := ParseKey(bad)
		assert.Error(t, err, bad)
	}
	_, err = NewSealer(make([]byte, 16))
	assert.Error(t, err)
}

func FuzzOpen(f *testing.F) {
	s, err := NewRandomSealer()
	require.NoError(f, err)
	tok, err := s.Seal("session", []byte("payload"), time.Hour)
	require.NoError(f, err)
	f.Add(tok)
	f.Add("")
	f.Add("AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
	f.Fuzz(func(t *testing.T, token string) {
		payload, err := s.Open("session", token)
		if err == nil && token != tok && string(payload) != "payload" {
			t.Fatalf("a token not sealed here opened: %q", token)
		}
	})
}

// TestOpenSized: a token's text is SealedLen of its payload; OpenSized
// opens payloads up to its bound and refuses a longer text undecoded.
func TestOpenSized(t *testing.T) {
	s, err := NewRandomSealer()
	require.NoError(t, err)
	for _, n := range []int{0, 1, 2, 3, 4096, 256 << 10} {
		tok, err := s.Seal("state", make([]byte, n), time.Hour)
		require.NoError(t, err)
		assert.Equal(t, s.SealedLen(n), len(tok), n)
		payload, _, err := s.OpenSized("state", tok, n)
		require.NoError(t, err, n)
		assert.Len(t, payload, n)
		if n > 0 {
			_, _, err = s.OpenSized("state", tok, n-3) // a shorter bound: a shorter text
			assert.ErrorIs(t, err, ErrInvalidToken, n)
		}
	}
	big, err := s.Seal("state", make([]byte, MaxTokenLen), time.Hour)
	require.NoError(t, err)
	_, err = s.Open("state", big)
	assert.ErrorIs(t, err, ErrInvalidToken, "Open keeps its bound")
}
