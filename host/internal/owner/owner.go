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
// "principal:" (a verified access token's user), "key:" (a verified
// function key) or "addr:" (the client address). The rest is a digest or
// an address, never a secret.
type ID string

// Kind returns what the ID was derived from: "principal", "key" or "addr"
// ("" for the zero ID).
func (id ID) Kind() string {
	k, _, _ := strings.Cut(string(id), ":")
	return k
}

type (
	principalKey struct{}
	verifiedKey  struct{}
	addressKey   struct{}
)

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

// KeyOwner returns the owner ID of the holders of a function key: a
// digest, never the key.
func KeyOwner(key string) ID { return ID("key:" + digest(key)) }

// WithVerifiedKey returns ctx carrying the owner of a function key the
// host verified (see [KeyOwner]). Only the link that checks keys sets it:
// a key nobody checked (an Anonymous app) names no owner.
func WithVerifiedKey(ctx context.Context, id ID) context.Context {
	return context.WithValue(ctx, verifiedKey{}, id)
}

// WithAddress returns ctx carrying the client address of its request as
// the edge worked it out (a trusted proxy's X-Forwarded-For, see
// [Proxies]); [ClientAddress] prefers it to the request's RemoteAddr.
func WithAddress(ctx context.Context, addr ID) context.Context {
	return context.WithValue(ctx, addressKey{}, addr)
}

// Of returns the owner of what request r leaves behind: its verified
// principal, else its verified function key, else its client address.
// Nothing the client merely sends (an Authorization header nobody checks,
// a key of an Anonymous app, an Mcp-Session-Id) makes another owner: every
// unauthenticated request of one address has one owner, so the per-owner
// limits hold per address whatever it sends.
func Of(r *http.Request) ID {
	ctx := r.Context()
	if p, _ := ctx.Value(principalKey{}).(*PrincipalOwner); p != nil && p.principal != "" {
		return p.id
	}
	if k, _ := ctx.Value(verifiedKey{}).(ID); k != "" {
		return k
	}
	return ClientAddress(r)
}

// Verified reports whether id names a verified identity (a principal or
// a function key) rather than a client address.
func (id ID) Verified() bool {
	k := id.Kind()
	return k == "principal" || k == "key"
}

// ClientAddress returns the owner named by r's client address: the one
// the edge set ([WithAddress]), else RemoteAddr's host.
func ClientAddress(r *http.Request) ID {
	if a, _ := r.Context().Value(addressKey{}).(ID); a != "" {
		return a
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

func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(sum[:18])
}

// Principal returns the principal.
func (p *PrincipalOwner) Principal() string { return p.principal }
