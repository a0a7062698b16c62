package owner

import (
	"crypto/sha256"
	"encoding/base64"
	"net"
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

// KeyOwner returns the owner ID of the holders of a function key: a
// digest, never the key.
func KeyOwner(key string) ID { return ID("key:" + digest(key)) }

// Verified reports whether id names a verified identity (a principal or
// a function key) rather than a client address.
func (id ID) Verified() bool {
	k := id.Kind()
	return k == "principal" || k == "key"
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

// ID returns the principal's owner ID.
func (p *PrincipalOwner) ID() ID { return p.id }
