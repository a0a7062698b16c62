package oauth

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/metadata"
)

// Headers of the caller's identity, as App Service authentication gives
// them to an app. The host sets them on the request the worker sees
// (transport.properties.headers) and removes any a client sent.
const (
	HeaderPrincipal     = "X-Ms-Client-Principal"
	HeaderPrincipalID   = "X-Ms-Client-Principal-Id"
	HeaderPrincipalName = "X-Ms-Client-Principal-Name"
	HeaderPrincipalIDP  = "X-Ms-Client-Principal-Idp"
	// HeaderAccessToken carries the caller's access token when the app opts
	// in (SettingPassToken).
	HeaderAccessToken = "X-Ms-Token-Aad-Access-Token"
)

// reservedPrefixes start the header names only the platform sets.
var reservedPrefixes = []string{"X-Ms-Client-Principal", "X-Ms-Token-"}

// IsReserved reports whether a header name is one only the platform sets
// (the caller's identity and tokens): a client's are never believed.
func IsReserved(name string) bool {
	// Every reserved name starts with X, in either case: most names are
	// told apart without being canonicalised.
	if name == "" || name[0] != 'X' && name[0] != 'x' {
		return false
	}
	name = http.CanonicalHeaderKey(name)
	for _, p := range reservedPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// Identity is what a valid access token says of its caller.
type Identity struct {
	Issuer   string
	Subject  string
	TenantID string // tid, "" outside Entra ID
	ObjectID string // oid, "" outside Entra ID
	// Name is the display name (name, else preferred_username).
	Name string
	// Username is preferred_username (else upn, email).
	Username string
	// Scopes are the delegated scopes (scp, else scope), Roles the
	// application roles (roles).
	Scopes []string
	Roles  []string
	// Claims are all the token's claims.
	Claims map[string]any
	// prepared is what every request with the token gets, worked out once
	// when it is validated (encodeHeaders) and kept with it in the cache;
	// nil for an identity built otherwise.
	prepared *prepared
}

// prepared is what a validated token's requests share.
type prepared struct {
	owner *owner.PrincipalOwner
	// headers are the identity headers' values, in the order of
	// identityHeaders ("" for one not set).
	headers [len(identityHeaders)]string
	// members are the same headers encoded as members of the invocation's
	// headers object, "name":"value" (EncodedHeader).
	members [len(identityHeaders)]string
}

// identityHeaders are the identity headers the host sets, canonical.
var identityHeaders = [...]string{HeaderPrincipal, HeaderPrincipalID, HeaderPrincipalName, HeaderPrincipalIDP}

func claimString(c map[string]any, name string) string {
	s, _ := c[name].(string)
	return s
}

// identityOf reads the identity claims of a validated token.
func identityOf(c map[string]any) *Identity {
	id := &Identity{
		Issuer:   claimString(c, "iss"),
		Subject:  claimString(c, "sub"),
		TenantID: claimString(c, "tid"),
		ObjectID: claimString(c, "oid"),
		Claims:   c,
	}
	id.Username = firstOf(c, "preferred_username", "upn", "email")
	id.Name = firstOf(c, "name", "preferred_username", "upn", "email")
	scopes := claimString(c, "scp")
	if scopes == "" {
		scopes = claimString(c, "scope")
	}
	id.Scopes = strings.Fields(scopes)
	if rs, ok := c["roles"].([]any); ok {
		for _, r := range rs {
			if s, ok := r.(string); ok {
				id.Roles = append(id.Roles, s)
			}
		}
	}
	return id
}

func firstOf(c map[string]any, names ...string) string {
	for _, n := range names {
		if s := claimString(c, n); s != "" {
			return s
		}
	}
	return ""
}

// Principal names the caller for everything bound to it: tenant and
// object id for Entra ID (stable across the apps of a tenant, where sub is
// per app), else issuer and subject.
func (id *Identity) Principal() string {
	if id.prepared != nil {
		return id.prepared.owner.Principal()
	}
	return id.principal()
}

func (id *Identity) principal() string {
	if id.TenantID != "" && id.ObjectID != "" {
		return "entra|" + id.TenantID + "|" + id.ObjectID
	}
	return "oidc|" + id.Issuer + "|" + id.Subject
}

// grants reports whether the token grants scope: a delegated scope or an
// application role of that name. Entra ID tokens carry the short name
// ("Tools.Admin") of a scope asked for as "api://<app>/Tools.Admin"; the
// audience check has already tied the token to this resource.
func (id *Identity) grants(scope string) bool {
	short := scope
	if i := strings.LastIndexByte(scope, '/'); i >= 0 && strings.Contains(scope, "://") {
		short = scope[i+1:]
	}
	for _, have := range [...][]string{id.Scopes, id.Roles} {
		if slices.Contains(have, scope) || slices.Contains(have, short) {
			return true
		}
	}
	return false
}

// Missing returns the scopes of required the token does not grant.
func (id *Identity) Missing(required []string) []string {
	var out []string
	for _, s := range required {
		if !id.grants(s) {
			out = append(out, s)
		}
	}
	return out
}

// Well-known claim types App Service uses for the name and the roles.
const (
	nameType = "name"
	roleType = "roles"
)

// clientPrincipal is the body of X-MS-CLIENT-PRINCIPAL (base64 JSON).
type clientPrincipal struct {
	AuthType string       `json:"auth_typ"`
	Claims   []claimEntry `json:"claims"`
	NameType string       `json:"name_typ"`
	RoleType string       `json:"role_typ"`
}

type claimEntry struct {
	Type  string `json:"typ"`
	Value string `json:"val"`
}

// IdentityProvider is the X-MS-CLIENT-PRINCIPAL-IDP value: "aad" for Entra
// ID (as App Service says), else "oidc".
func (id *Identity) IdentityProvider() string {
	if id.TenantID != "" {
		return "aad"
	}
	return "oidc"
}

// encodeHeaders works out once what every request with the token gets:
// the principal's owner and the identity headers, the X-MS-CLIENT-PRINCIPAL
// value base64 JSON of every claim, arrays one entry per value, as App
// Service does.
func (id *Identity) encodeHeaders() error {
	hs, err := id.headerValues()
	if err != nil {
		return err
	}
	p := &prepared{owner: owner.NewPrincipalOwner(id.principal()), headers: hs}
	for i, name := range identityHeaders {
		m := metadata.AppendJSONString(nil, name)
		m = append(m, ':')
		p.members[i] = string(metadata.AppendJSONString(m, hs[i]))
	}
	id.prepared = p
	return nil
}

// EncodedHeader returns the identity header name with value as a member of
// the invocation's headers object (`"name":"value"`, as
// metadata.AppendJSONString writes both), encoded once when the token was
// validated, when value is the one the token's requests get: funchost
// splices it into every invocation (invoke.HeaderEncoder) rather than
// encode the ~650-byte principal each time.
func (id *Identity) EncodedHeader(name, value string) (string, bool) {
	if id == nil || id.prepared == nil {
		return "", false
	}
	for i, k := range identityHeaders {
		if k == name {
			if value != id.prepared.headers[i] {
				return "", false
			}
			return id.prepared.members[i], true
		}
	}
	return "", false
}

// headerValues builds the identity headers' values (identityHeaders).
func (id *Identity) headerValues() (hs [len(identityHeaders)]string, err error) {
	p := clientPrincipal{AuthType: id.IdentityProvider(), NameType: nameType, RoleType: roleType}
	names := make([]string, 0, len(id.Claims))
	for k := range id.Claims {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		switch v := id.Claims[k].(type) {
		case string:
			p.Claims = append(p.Claims, claimEntry{k, v})
		case []any:
			for _, e := range v {
				p.Claims = append(p.Claims, claimEntry{k, claimText(e)})
			}
		default:
			p.Claims = append(p.Claims, claimEntry{k, claimText(v)})
		}
	}
	data, err := json.Marshal(p)
	if err != nil {
		return hs, fmt.Errorf("encoding the client principal: %w", err)
	}
	pid := id.ObjectID
	if pid == "" {
		pid = id.Subject
	}
	name := firstOf(id.Claims, "preferred_username", "upn", "email", "name")
	return [...]string{base64.StdEncoding.EncodeToString(data), pid, name, id.IdentityProvider()}, nil
}

// owner returns the principal's owner.
func (id *Identity) owner() *owner.PrincipalOwner {
	if id.prepared != nil {
		return id.prepared.owner
	}
	return owner.NewPrincipalOwner(id.principal())
}

// setHeaders puts the identity headers on h: the principal, its id (oid,
// else sub), name (when the token has one) and identity provider. The
// values were built when the token was validated; the request gets its
// own slices of them (one allocation), which it may change.
func (id *Identity) setHeaders(h http.Header) {
	hs := [len(identityHeaders)]string{}
	if id.prepared != nil {
		hs = id.prepared.headers
	} else if built, err := id.headerValues(); err == nil {
		hs = built
	}
	vals := make([]string, 0, len(hs))
	for i, k := range identityHeaders {
		if hs[i] == "" && k != HeaderPrincipal && k != HeaderPrincipalID {
			continue
		}
		vals = append(vals, hs[i])
		h[k] = vals[len(vals)-1 : len(vals) : len(vals)]
	}
}

// claimText is a claim value as text: a string as it is, else its JSON.
func claimText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	data, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(data)
}
