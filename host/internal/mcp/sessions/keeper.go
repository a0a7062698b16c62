package sessions

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/metadata"
)

// Keeper mints and opens the sessions of one endpoint: the key they are
// sealed with, their lifetime, the revisions they may hold, and the last
// token opened (a client sends the same one with every request, so a
// one-entry cache spares most openings).
type Keeper struct {
	sealer   *auth.Sealer
	lifetime time.Duration
	versions []string
	last     atomic.Pointer[hit]
}

type hit struct {
	token   string
	s       *Session
	expires time.Time // the token's expiry: past it, the token is opened again
}

// NewKeeper returns the keeper of the sessions sealed with sealer, valid
// for lifetime, of one of versions (which it keeps; do not modify them).
func NewKeeper(sealer *auth.Sealer, lifetime time.Duration, versions []string) *Keeper {
	return &Keeper{sealer: sealer, lifetime: lifetime, versions: versions}
}

// Mint mints the Mcp-Session-Id of an initialize response (see [Mint]).
func (k *Keeper) Mint(version string, client *metadata.ClientInfo, caps json.RawMessage, owner string) (string, error) {
	return Mint(k.sealer, k.lifetime, version, client, caps, owner)
}

// Refusal is why a request's session state is refused: the HTTP status,
// the JSON-RPC error message and its data (nil for none).
type Refusal struct {
	Status  int
	Message string
	Data    any
}

// Refusals of Open and Version.
var (
	// 404 tells a client that its session ended: it initializes again.
	refuseExpired = &Refusal{Status: http.StatusNotFound, Message: "Session expired: initialize again."}
	refuseInvalid = &Refusal{Status: http.StatusBadRequest, Message: "Invalid client state."}
)

// Open opens the session token names for a request of owner (see
// [OwnerOf]); (nil, nil) when token is "". A session minted for another
// owner (another principal behind the access token check, or none) is
// refused exactly as a token that does not open: its holder learns
// nothing of it.
func (k *Keeper) Open(token, owner string) (*Session, *Refusal) {
	if token == "" {
		return nil, nil
	}
	var s *Session
	if h := k.last.Load(); h != nil && h.token == token && time.Now().Before(h.expires) {
		s = h.s
	} else {
		var exp time.Time
		var err error
		s, exp, err = Open(k.sealer, token, k.versions)
		if errors.Is(err, ErrExpiredToken) {
			return nil, refuseExpired
		}
		if err != nil {
			return nil, refuseInvalid
		}
		k.last.Store(&hit{token: token, s: s, expires: exp})
	}
	if s.Owner != owner {
		return nil, refuseInvalid
	}
	return s, nil
}

// Version picks the revision of a request: header (its
// MCP-Protocol-Version, "" when it has none) when it is one the keeper
// serves, else the session's, else def.
func (k *Keeper) Version(header string, s *Session, def string) (string, *Refusal) {
	if header != "" {
		if i := slices.Index(k.versions, header); i >= 0 {
			return k.versions[i], nil
		}
		data := struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}{k.versions, header}
		return "", &Refusal{Status: http.StatusBadRequest, Message: "Unsupported protocol version", Data: data}
	}
	if s != nil {
		return s.Version, nil
	}
	return def, nil
}

// Info is what an Mcp-Session-Id says of its session, for the session
// duration metric: the revision, when it began (its token's expiry less
// the session lifetime) and when it expires.
type Info struct {
	Version string
	Began   time.Time
	Expires time.Time
	// Expired: the token is genuine but past its lifetime (the request
	// is answered 404 and the client initializes again).
	Expired bool
}

// Info reads token; false when it does not open. It costs one opening.
func (k *Keeper) Info(token string) (Info, bool) {
	s, exp, err := Open(k.sealer, token, k.versions)
	switch {
	case errors.Is(err, ErrExpiredToken):
		return Info{Began: exp.Add(-k.lifetime), Expires: exp, Expired: true}, true
	case err != nil:
		return Info{}, false
	}
	return Info{Version: s.Version, Began: exp.Add(-k.lifetime), Expires: exp}, true
}
