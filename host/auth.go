package host

import (
	"net/http"

	"github.com/funcmcp/funcmcp/host/internal/auth"
)

// App settings (environment variables, else local.settings.json Values)
// holding the keys.
const (
	// EnvMasterKey holds the master key.
	EnvMasterKey = auth.EnvMasterKey
	// EnvSystemKey holds the mcp_extension system key.
	EnvSystemKey = auth.EnvSystemKey
	// EnvSessionKey and EnvSessionKeyFallback hold the session token key
	// (64 hex digits or base64 of 32 bytes), the names the Functions host
	// reads.
	EnvSessionKey         = auth.EnvSessionKey
	EnvSessionKeyFallback = auth.EnvSessionKeyFallback
)

// KeysFile is where a host that found no configured key keeps the keys it
// generated, relative to the script root.
const KeysFile = auth.KeysFile

// VerifyKey reports whether r may call the MCP endpoints: it carries the
// mcp_extension system key or the master key (always true when the app is
// Anonymous).
func (h *Host) VerifyKey(r *http.Request) bool { return h.secrets.Verify(r) }
