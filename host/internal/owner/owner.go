package owner

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net"
	"net/http"
	"strings"
)

// ID names an owner. Its prefix says what it was derived from:
// "principal:", "key:", "session:" or "addr:". The rest is a digest or an
// address, never a secret.
type ID string

// Kind returns what the ID was derived from: "principal", "key",
// "session" or "addr" ("" for the zero ID).
func (id ID) Kind() string {
	k, _, _ := strings.Cut(string(id), ":")
	return k
}

type principalKey struct{}

// PrincipalOwner is an authenticated principal with its owner ID, worked
// out once: a caller that meets the same principal on many requests (a
// remembered access token) keeps one and spares every request the digest.
type PrincipalOwner struct {
	principal string
	id        ID
}

// NewPrincipalOwner returns principal with its owner ID.
func NewPrincipalOwner(principal string) *PrincipalOwner {
	return &PrincipalOwner{principal: principal, id: ID("principal:" + digest(principal))}
}

// WithPrincipal returns ctx carrying the authenticated principal (for
// example issuer + subject). [Of] prefers it to every other identity.
func WithPrincipal(ctx context.Context, principal string) context.Context {
	return WithPrincipalOwner(ctx, NewPrincipalOwner(principal))
}

// WithPrincipalOwner is [WithPrincipal] with the owner ID already worked
// out; p is shared, never changed.
func WithPrincipalOwner(ctx context.Context, p *PrincipalOwner) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// Principal returns the principal set by [WithPrincipal], or "".
func Principal(ctx context.Context) string {
	if p, _ := ctx.Value(principalKey{}).(*PrincipalOwner); p != nil {
		return p.principal
	}
	return ""
}

// Of returns the owner of what request r leaves behind.
func Of(r *http.Request) ID {
	if p, _ := r.Context().Value(principalKey{}).(*PrincipalOwner); p != nil && p.principal != "" {
		return p.id
	}
	if c := credentials(r); c != "" {
		return ID("key:" + c)
	}
	if s := r.Header.Get("Mcp-Session-Id"); s != "" {
		return ID("session:" + digest(s))
	}
	return Address(r.RemoteAddr)
}

// Address returns the owner of a connection from remote address addr
// (host:port): its host alone, so that every connection of one client
// address counts together.
func Address(addr string) ID {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		addr = host
	}
	return ID("addr:" + addr)
}

// credentials returns [CredentialsDigest] of r, or "" when r has no
// credentials.
func credentials(r *http.Request) string {
	if len(r.Header.Values("Authorization")) == 0 && len(r.Header.Values("X-Functions-Key")) == 0 && r.URL.Query().Get("code") == "" {
		return ""
	}
	return CredentialsDigest(r)
}

// CredentialsDigest returns a digest of r's credentials (Authorization,
// x-functions-key, the code query parameter); requests without any share
// one digest. It never shows a credential.
func CredentialsDigest(r *http.Request) string {
	d := sha256.New()
	for _, k := range [...]string{"Authorization", "X-Functions-Key"} {
		for _, v := range r.Header.Values(k) {
			d.Write([]byte(v))
			d.Write([]byte{0})
		}
		d.Write([]byte{1})
	}
	d.Write([]byte(r.URL.Query().Get("code")))
	return base64.RawURLEncoding.EncodeToString(d.Sum(nil)[:18])
}

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(sum[:18])
}

// Principal returns the principal.
func (p *PrincipalOwner) Principal() string { return p.principal }
