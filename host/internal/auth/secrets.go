package auth

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"github.com/funcmcp/funcmcp/host/internal/caller"
	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/metadata"
)

// App settings (environment variables, else local.settings.json Values)
// holding the keys.
const (
	// EnvMasterKey holds the master key.
	EnvMasterKey = "FUNCHOST_MASTER_KEY"
	// EnvSystemKey holds the mcp_extension system key.
	EnvSystemKey = "FUNCHOST_MCP_EXTENSION_KEY"
	// EnvSessionKey and EnvSessionKeyFallback hold the session token key
	// (64 hex digits or base64 of 32 bytes), the names the Functions host
	// reads.
	EnvSessionKey         = "WEBSITE_AUTH_ENCRYPTION_KEY"
	EnvSessionKeyFallback = "CONTAINER_ENCRYPTION_KEY"
)

// WorkerHidden are the variables the worker never gets in its environment,
// whether they come from the host's environment or local.settings.json
// Values: the function keys. The Functions host keeps its keys from a
// custom handler too. (The session key variables are the platform's and
// stay visible, as on Azure.)
var WorkerHidden = []string{EnvMasterKey, EnvSystemKey}

// KeysFile is where a host that found no configured key keeps the keys it
// generated, relative to the script root.
const KeysFile = ".funchost/keys.json"

// Given are the secrets the host was handed in its options; empty ones are
// looked up.
type Given struct {
	MasterKey, SystemKey string
	SessionKey           []byte
}

// Secrets are the host's keys once resolved. Fields are read-only once
// [Resolve] returns.
type Secrets struct {
	// Keys are accepted on the MCP endpoints and /admin/*; nil when the
	// app is Anonymous.
	Keys *Keys
	// Sealer seals session and SSE client-state tokens.
	Sealer *Sealer
	// Where says where the function keys come from, for the console;
	// never a key.
	Where string
	// SessionWhere says where the session key comes from.
	SessionWhere string
}

// storedKeys is the body of KeysFile.
type storedKeys struct {
	MasterKey  string            `json:"masterKey"`
	SystemKeys map[string]string `json:"systemKeys"`
}

// Resolve finds the function keys (given, the environment,
// local.settings.json, else KeysFile under root, generated when missing)
// and the session key (given, the environment, local.settings.json, else
// random), as cfg's authorization level needs them.
func Resolve(given *Given, root string, cfg *config.Config) (*Secrets, error) {
	s := &Secrets{}
	if err := s.resolveSealer(given, cfg); err != nil {
		return nil, err
	}
	if cfg.AuthLevel == config.AuthAnonymous {
		s.Where = "none needed (webhookAuthorizationLevel is Anonymous)"
		return s, nil
	}
	master, system := given.MasterKey, given.SystemKey
	var places []string
	if master != "" || system != "" {
		places = append(places, "options")
	}
	if master == "" {
		var from string
		if master, from = cfg.Lookup(EnvMasterKey); from != "" {
			places = append(places, from)
		}
	}
	if system == "" {
		var from string
		if system, from = cfg.Lookup(EnvSystemKey); from != "" {
			places = append(places, from)
		}
	}
	if master == "" && system == "" {
		file := filepath.Join(root, filepath.FromSlash(KeysFile))
		stored, err := loadOrCreateKeys(file)
		if err != nil {
			return nil, err
		}
		master, system = stored.MasterKey, stored.SystemKeys[SystemKeyName]
		places = append(places, file)
	}
	s.Where = strings.Join(places, ", ")
	if cfg.AuthLevel == config.AuthAdmin {
		s.Keys = NewKeys(master)
	} else {
		s.Keys = NewKeys(master, system)
	}
	if s.Keys.Empty() {
		return nil, &config.Error{File: filepath.Join(root, config.HostFile), Key: "extensions.mcp.system.webhookAuthorizationLevel",
			Err: fmt.Errorf("%s needs the master key: set %s", cfg.AuthLevel, EnvMasterKey)}
	}
	return s, nil
}

func (s *Secrets) resolveSealer(given *Given, cfg *config.Config) error {
	key := given.SessionKey
	s.SessionWhere = "options"
	if key == nil {
		text, from := cfg.Lookup(EnvSessionKey)
		if text == "" {
			text, from = cfg.Lookup(EnvSessionKeyFallback)
		}
		if text != "" {
			k, err := ParseKey(text)
			if err != nil {
				return fmt.Errorf("reading the session key from %s: %w", from, err)
			}
			key, s.SessionWhere = k, from
		}
	}
	var err error
	if key == nil {
		s.SessionWhere = "a random key of this process (set " + EnvSessionKey + " to share sessions across instances)"
		s.Sealer, err = NewRandomSealer()
	} else {
		s.Sealer, err = NewSealer(key)
	}
	return err
}

// loadOrCreateKeys reads file, or writes new random keys to it (mode 0600).
func loadOrCreateKeys(file string) (*storedKeys, error) {
	data, err := metadata.ReadRegularFile(file, config.MaxFileBytes)
	if err == nil {
		var k storedKeys
		if err := json.Unmarshal(data, &k); err != nil {
			return nil, &config.Error{File: file, Err: fmt.Errorf("parsing the stored keys: %w", err)}
		}
		if k.MasterKey == "" && k.SystemKeys[SystemKeyName] == "" {
			return nil, &config.Error{File: file, Err: errors.New("holds no key")}
		}
		return &k, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, &config.Error{File: file, Err: err}
	}
	k := &storedKeys{MasterKey: newKey(), SystemKeys: map[string]string{SystemKeyName: newKey()}}
	data, err = json.MarshalIndent(k, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return nil, &config.Error{File: file, Err: fmt.Errorf("storing generated keys: %w (or set %s)", err, EnvSystemKey)}
	}
	if err := os.WriteFile(file, append(data, '\n'), 0o600); err != nil {
		return nil, &config.Error{File: file, Err: fmt.Errorf("storing generated keys: %w (or set %s)", err, EnvSystemKey)}
	}
	return k, nil
}

// newKey returns 32 random bytes as hex.
func newKey() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Verify reports whether r may call the MCP endpoints: it carries the
// mcp_extension system key or the master key (always true when the app is
// Anonymous).
func (s *Secrets) Verify(r *http.Request) bool {
	return s.Keys == nil || s.Keys.Verify(r)
}

// RequireKey answers 401, with no detail, a request that does not carry
// the system or the master key (see [Secrets.Verify]). A request let
// through has the owner of its key in its record (caller.Caller.SetKey): a checked
// key names its holders' owner. An Anonymous app checks no key, and a key
// sent to it names no owner.
func (s *Secrets) RequireKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys := s.Keys
		if keys == nil {
			next.ServeHTTP(w, r)
			return
		}
		id, ok := keys.Owner(r)
		if !ok {
			w.Header().Set("Content-Length", "0")
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		r, c := caller.Ensure(r)
		c.SetKey(id)
		next.ServeHTTP(w, r)
	})
}
