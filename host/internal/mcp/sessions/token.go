package sessions

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/caller"
	"github.com/funcmcp/funcmcp/host/internal/ids"
	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/metadata"
)

// Purpose is the additional data of every sealed session token: a
// token sealed for something else (an SSE client state) never opens as one.
const Purpose = "mcp-session"

// sessionToken is the JSON sealed inside an Mcp-Session-Id header. It carries
// the protocol state of a client so that no server-side session map is needed.
type sessionToken struct {
	ID      string       `json:"id"`
	Version string       `json:"v"`
	Client  *tokenClient `json:"c,omitempty"`
	// Caps are the client capabilities a call may use (see
	// clientreq.RequestCapabilities), as initialize declared them; nil when none.
	Caps json.RawMessage `json:"k,omitempty"`
	// Owner is the principal's owner ID (caller.Caller.Owner) of the initialize
	// behind the access token check, "" without one: the session then
	// serves requests of that principal only (see OwnerOf).
	Owner string `json:"o,omitempty"`
}

type tokenClient struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Session is a parsed token: what a request inherits from its initialize.
type Session struct {
	ID      string // random, sealed in the token: the scope of its calls
	Version string
	Client  *metadata.ClientInfo
	Caps    json.RawMessage // see sessionToken.Caps
	Owner   string          // see sessionToken.Owner
	Expires time.Time       // when the token expires
}

// OwnerOf is the owner a session of a request of who is bound to: its
// authenticated principal's owner ID (whatever token of theirs it
// carries), "" when it has none. A session serves only requests with the
// owner it was minted for.
func OwnerOf(who *caller.Caller) string {
	if who.Principal() == "" {
		return ""
	}
	return string(who.Owner())
}

// Errors of Open.
var (
	// ErrInvalidToken is any Mcp-Session-Id that does not open.
	ErrInvalidToken = errors.New("invalid client state")
	// ErrExpiredToken is a genuine token past its lifetime.
	ErrExpiredToken = errors.New("expired session")
)

// MaxClientInfoBytes bounds the clientInfo name and version a session
// token keeps: longer ones are cut (on a character boundary), so that a
// token stays far below the size of a request header the host accepts.
const MaxClientInfoBytes = 256

// Mint mints the sealed Mcp-Session-Id of an initialize response.
func Mint(sealer *auth.Sealer, ttl time.Duration, version string, client *metadata.ClientInfo, caps json.RawMessage, owner string) (string, error) {
	t := sessionToken{ID: NewID(), Version: version, Caps: RequestCapabilitiesOf(caps), Owner: owner}
	if client != nil {
		t.Client = &tokenClient{Name: Cut(client.Name, MaxClientInfoBytes), Version: Cut(client.Version, MaxClientInfoBytes)}
	}
	data, err := json.Marshal(&t)
	if err != nil {
		return "", err
	}
	return sealer.Seal(Purpose, data, ttl)
}

// Open opens an Mcp-Session-Id made by Mint.
// versions is the list of revisions the token's version must be one of.
func Open(sealer *auth.Sealer, token string, versions []string) (*Session, time.Time, error) {
	data, exp, err := sealer.OpenExpiry(Purpose, token)
	if errors.Is(err, auth.ErrExpiredToken) {
		return nil, exp, ErrExpiredToken
	}
	if err != nil {
		return nil, exp, ErrInvalidToken
	}
	var t sessionToken
	if err := json.Unmarshal(data, &t); err != nil {
		return nil, exp, ErrInvalidToken
	}
	i := slices.Index(versions, t.Version)
	if t.ID == "" || i < 0 {
		return nil, exp, ErrInvalidToken
	}
	s := &Session{ID: t.ID, Version: versions[i], Caps: t.Caps, Owner: t.Owner, Expires: exp}
	if t.Client != nil {
		s.Client = &metadata.ClientInfo{Name: t.Client.Name, Version: t.Client.Version}
	}
	return s, exp, nil
}

// MaxCapabilityBytes bounds each capability a session token keeps: a
// larger one is kept as {} (declared, without its details), so that a
// token stays far below the size of a request header the host accepts.
const MaxCapabilityBytes = 512

// RequestCapabilitiesOf returns the members of a capabilities object that
// a call may use (elicitation, sampling, roots), compact; nil when none.
func RequestCapabilitiesOf(caps []byte) json.RawMessage {
	if len(caps) == 0 || caps[0] != '{' {
		return nil
	}
	var b bytes.Buffer
	for _, name := range clientreq.RequestCapabilities {
		v := wire.Member(caps, name)
		if v == nil || v[0] == 'n' {
			continue
		}
		if b.Len() == 0 {
			b.WriteByte('{')
		} else {
			b.WriteByte(',')
		}
		b.Write(metadata.AppendJSONString(b.AvailableBuffer(), name))
		b.WriteByte(':')
		if len(v) > MaxCapabilityBytes || v[0] != '{' || json.Compact(&b, v) != nil {
			b.WriteString("{}")
		}
	}
	if b.Len() == 0 {
		return nil
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Cut returns s cut to at most n bytes, on a character boundary.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// NewID returns a session or SSE client id: 16 characters of [a-z0-9],
// like the extension's client ids.
func NewID() string { return ids.Random(ids.LowerAlnum, 16) }
