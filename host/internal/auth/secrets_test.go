package auth

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/caller"
	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// withKey returns a request carrying key in x-functions-key ("" for none).
func withKey(key string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/runtime/webhooks/mcp", nil)
	if key != "" {
		r.Header.Set(HeaderFunctionsKey, key)
	}
	return r
}

func TestResolveKeys(t *testing.T) {
	t.Setenv(EnvMasterKey, "")
	t.Setenv(EnvSystemKey, "")
	tests := []struct {
		name      string
		level     config.AuthLevel
		given     Given
		values    []config.Setting
		env       map[string]string
		accepted  []string // keys that open the endpoints
		refused   []string
		where     string // "" → the keys file
		keysFile  bool   // whether the keys file is written
		wantError string
	}{
		{name: "anonymous", level: config.AuthAnonymous, accepted: []string{"", "anything"},
			where: "none needed (webhookAuthorizationLevel is Anonymous)"},
		{name: "given keys", level: config.AuthSystem, given: Given{MasterKey: "m", SystemKey: "s"},
			accepted: []string{"m", "s"}, refused: []string{"", "x"}, where: "options"},
		{name: "environment", level: config.AuthSystem, env: map[string]string{EnvSystemKey: "env-s"},
			accepted: []string{"env-s"}, refused: []string{""}, where: "environment " + EnvSystemKey},
		{name: "local.settings.json", level: config.AuthSystem, values: []config.Setting{{Key: EnvMasterKey, Value: "file-m"}},
			accepted: []string{"file-m"}, refused: []string{""}, where: "local.settings.json Values." + EnvMasterKey},
		{name: "admin takes the master key only", level: config.AuthAdmin, given: Given{MasterKey: "m", SystemKey: "s"},
			accepted: []string{"m"}, refused: []string{"s"}, where: "options"},
		{name: "admin without a master key", level: config.AuthAdmin, given: Given{SystemKey: "s"},
			wantError: "Admin needs the master key: set " + EnvMasterKey},
		{name: "generated", level: config.AuthSystem, keysFile: true, refused: []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			root := t.TempDir()
			s, err := Resolve(&tt.given, root, &config.Config{AuthLevel: tt.level, Values: tt.values})
			if tt.wantError != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantError)
				var ce *config.Error
				assert.True(t, errors.As(err, &ce), "a *config.Error")
				return
			}
			require.NoError(t, err)
			file := filepath.Join(root, KeysFile)
			if tt.keysFile {
				var stored storedKeys
				data, err := os.ReadFile(file)
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(data, &stored))
				tt.accepted = []string{stored.MasterKey, stored.SystemKeys[SystemKeyName]}
				tt.where = file
			} else {
				assert.NoFileExists(t, file)
			}
			assert.Equal(t, tt.where, s.Where)
			for _, key := range tt.accepted {
				assert.True(t, s.Verify(withKey(key)), "key %q", key)
			}
			for _, key := range tt.refused {
				assert.False(t, s.Verify(withKey(key)), "key %q", key)
			}
		})
	}
}

func TestGeneratedKeysAreKept(t *testing.T) {
	root := t.TempDir()
	cfg := &config.Config{AuthLevel: config.AuthSystem}
	first, err := Resolve(&Given{}, root, cfg)
	require.NoError(t, err)
	st, err := os.Stat(filepath.Join(root, KeysFile))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	second, err := Resolve(&Given{}, root, cfg)
	require.NoError(t, err)
	assert.Equal(t, first.Keys, second.Keys, "a second start reads the stored keys")

	require.NoError(t, os.WriteFile(filepath.Join(root, KeysFile), []byte(`{"masterKey":""}`), 0o600))
	_, err = Resolve(&Given{}, root, cfg)
	assert.ErrorContains(t, err, "holds no key")
	require.NoError(t, os.WriteFile(filepath.Join(root, KeysFile), []byte(`{`), 0o600))
	_, err = Resolve(&Given{}, root, cfg)
	assert.ErrorContains(t, err, "parsing the stored keys")
}

func TestResolveSessionKey(t *testing.T) {
	t.Setenv(EnvSessionKey, "")
	t.Setenv(EnvSessionKeyFallback, "")
	anon := &config.Config{AuthLevel: config.AuthAnonymous}
	given := make([]byte, KeySize)
	s, err := Resolve(&Given{SessionKey: given}, t.TempDir(), anon)
	require.NoError(t, err)
	assert.Equal(t, "options", s.SessionWhere)

	s, err = Resolve(&Given{}, t.TempDir(), anon)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(s.SessionWhere, "a random key of this process"))

	t.Setenv(EnvSessionKeyFallback, strings.Repeat("ab", KeySize))
	s, err = Resolve(&Given{}, t.TempDir(), anon)
	require.NoError(t, err)
	assert.Equal(t, "environment "+EnvSessionKeyFallback, s.SessionWhere)

	t.Setenv(EnvSessionKey, "not a key")
	_, err = Resolve(&Given{}, t.TempDir(), anon)
	require.ErrorContains(t, err, "reading the session key from environment "+EnvSessionKey)
	assert.NotContains(t, err.Error(), "not a key", "the key text is not echoed")
}

func TestRequireKey(t *testing.T) {
	s := &Secrets{Keys: NewKeys("k")}
	h := s.RequireKey(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	for _, tt := range []struct {
		key  string
		want int
	}{{"k", http.StatusTeapot}, {"", http.StatusUnauthorized}, {"K", http.StatusUnauthorized}} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, withKey(tt.key))
		assert.Equal(t, tt.want, rec.Code, "key %q", tt.key)
		if tt.want == http.StatusUnauthorized {
			assert.Empty(t, rec.Body.String(), "401 says nothing more")
		}
	}
}

// TestRequireKeyNamesTheOwnerOfVerifiedKeysOnly (issue 39, finding 5): a
// key the host checked names its holders' owner, the same whether it came
// in the header or the code; a key sent to an app that checks none names no
// owner (the request's is its address).
func TestRequireKeyNamesTheOwnerOfVerifiedKeysOnly(t *testing.T) {
	var got owner.ID
	next := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = caller.Of(r).Owner() })

	checked := (&Secrets{Keys: NewKeys("master", "system")}).RequireKey(next)
	checked.ServeHTTP(httptest.NewRecorder(), withKey("system"))
	assert.Equal(t, owner.KeyOwner("system"), got)
	checked.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPost, "/runtime/webhooks/mcp?code=system", nil))
	assert.Equal(t, owner.KeyOwner("system"), got)
	checked.ServeHTTP(httptest.NewRecorder(), withKey("master"))
	assert.Equal(t, owner.KeyOwner("master"), got)

	anonymous := (&Secrets{}).RequireKey(next)
	for _, key := range []string{"system", "random-1", "random-2"} {
		r := withKey(key)
		anonymous.ServeHTTP(httptest.NewRecorder(), r)
		assert.Equal(t, owner.Address(r.RemoteAddr), got, "an unchecked key %q names no owner", key)
	}
}
