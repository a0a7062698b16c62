package host

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

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/config"
)

// Environment variables (or local.settings.json Values) holding the keys.
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

// KeysFile is where a host that found no configured key keeps the keys it
// generated, relative to the script root.
const KeysFile = ".funchost/keys.json"

// secrets are the host's keys once resolved.
type secrets struct {
	mcpKeys *auth.Keys // accepted on the MCP endpoints and /admin/*; nil when anonymous
	sealer  *auth.Sealer
	// where says where the keys come from, for the console; never a key.
	where string
	// sessionWhere says where the session key comes from.
	sessionWhere string
}

// storedKeys is the body of KeysFile.
type storedKeys struct {
	MasterKey  string            `json:"masterKey"`
	SystemKeys map[string]string `json:"systemKeys"`
}

// resolveSecrets finds the function keys (options, environment,
// local.settings.json, else KeysFile, generated when missing) and the session
// key (options, environment, local.settings.json, else random).
func resolveSecrets(o *Options, root string, cfg *config.Config) (*secrets, error) {
	s := &secrets{}
	if err := s.resolveSealer(o, cfg); err != nil {
		return nil, err
	}
	if cfg.AuthLevel == config.AuthAnonymous {
		s.where = "none needed (webhookAuthorizationLevel is Anonymous)"
		return s, nil
	}
	master, system := o.MasterKey, o.SystemKey
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
		master, system = stored.MasterKey, stored.SystemKeys[auth.SystemKeyName]
		places = append(places, file)
	}
	s.where = strings.Join(places, ", ")
	if cfg.AuthLevel == config.AuthAdmin {
		s.mcpKeys = auth.NewKeys(master)
	} else {
		s.mcpKeys = auth.NewKeys(master, system)
	}
	if s.mcpKeys.Empty() {
		return nil, &ConfigError{File: filepath.Join(root, HostFile), Key: "extensions.mcp.system.webhookAuthorizationLevel",
			Err: fmt.Errorf("%s needs the master key: set %s", cfg.AuthLevel, EnvMasterKey)}
	}
	return s, nil
}

func (s *secrets) resolveSealer(o *Options, cfg *config.Config) error {
	key := o.SessionKey
	s.sessionWhere = "options"
	if key == nil {
		text, from := cfg.Lookup(EnvSessionKey)
		if text == "" {
			text, from = cfg.Lookup(EnvSessionKeyFallback)
		}
		if text != "" {
			k, err := auth.ParseKey(text)
			if err != nil {
				return fmt.Errorf("reading the session key from %s: %w", from, err)
			}
			key, s.sessionWhere = k, from
		}
	}
	var err error
	if key == nil {
		s.sessionWhere = "a random key of this process (set " + EnvSessionKey + " to share sessions across instances)"
		s.sealer, err = auth.NewRandomSealer()
	} else {
		s.sealer, err = auth.NewSealer(key)
	}
	return err
}

// loadOrCreateKeys reads file, or writes new random keys to it (mode 0600).
func loadOrCreateKeys(file string) (*storedKeys, error) {
	data, err := os.ReadFile(file)
	if err == nil {
		var k storedKeys
		if err := json.Unmarshal(data, &k); err != nil {
			return nil, &ConfigError{File: file, Err: fmt.Errorf("parsing the stored keys: %w", err)}
		}
		if k.MasterKey == "" && k.SystemKeys[auth.SystemKeyName] == "" {
			return nil, &ConfigError{File: file, Err: errors.New("holds no key")}
		}
		return &k, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return nil, &ConfigError{File: file, Err: err}
	}
	k := &storedKeys{MasterKey: newKey(), SystemKeys: map[string]string{auth.SystemKeyName: newKey()}}
	data, err = json.MarshalIndent(k, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return nil, &ConfigError{File: file, Err: fmt.Errorf("storing generated keys: %w (or set %s)", err, EnvSystemKey)}
	}
	if err := os.WriteFile(file, append(data, '\n'), 0o600); err != nil {
		return nil, &ConfigError{File: file, Err: fmt.Errorf("storing generated keys: %w (or set %s)", err, EnvSystemKey)}
	}
	return k, nil
}

// newKey returns 32 random bytes as hex.
func newKey() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// requireKey answers 401, with no detail, a request that does not carry
// the system or the master key (see VerifyKey).
func (h *Host) requireKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !h.VerifyKey(r) {
			w.Header().Set("Content-Length", "0")
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// VerifyKey reports whether r may call the MCP endpoints: it carries the
// mcp_extension system key or the master key (always true when the app is
// Anonymous).
func (h *Host) VerifyKey(r *http.Request) bool {
	return h.secrets.mcpKeys == nil || h.secrets.mcpKeys.Verify(r)
}
