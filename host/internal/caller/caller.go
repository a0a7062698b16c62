package caller

import (
	"context"
	"net/http"

	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// Identity is what a verified access token says of its caller, as the
// OAuth guard validated it (*oauth.Identity): what the steps behind the
// guard read of it.
type Identity interface {
	// Principal names the caller for everything bound to it.
	Principal() string
	// Missing returns the scopes of required the token does not grant.
	Missing(required []string) []string
	// EncodedHeader returns an identity header with its value as a member
	// of the invocation's headers object, encoded once per token, when
	// value is the one the token's requests get (invoke.HeaderEncoder).
	EncodedHeader(name, value string) (string, bool)
}

// Caller is who sent one request, as the host verified it: its client
// address, its access token's principal and identity (with OAuth), and
// the owner of the function key it carried (when the host checked one).
type Caller struct {
	address   owner.ID
	principal *owner.PrincipalOwner
	identity  Identity
	headers   http.Header
	key       owner.ID
}

// New returns the record of a request from client address address (see
// owner.Address and owner.Proxies.Client), before anything verified it.
func New(address owner.ID) *Caller { return &Caller{address: address} }

type contextKey struct{}

// Attach returns r carrying c: the edge attaches the record once, before
// any other link reads the request.
func Attach(r *http.Request, c *Caller) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), contextKey{}, c))
}

// Of returns the record the edge attached to r, else a record of r's
// connection alone (a request that did not pass an edge verified
// nothing).
func Of(r *http.Request) *Caller {
	if c, _ := r.Context().Value(contextKey{}).(*Caller); c != nil {
		return c
	}
	return New(owner.Address(r.RemoteAddr))
}

// Ensure returns r and its record, attaching a record of r's connection
// when r carries none: a link that fills the record (the OAuth guard, the
// key link) fills the one the request carries on.
func Ensure(r *http.Request) (*http.Request, *Caller) {
	if c, _ := r.Context().Value(contextKey{}).(*Caller); c != nil {
		return r, c
	}
	c := New(owner.Address(r.RemoteAddr))
	return Attach(r, c), c
}

// SetIdentity records the verified access token of the request: its
// principal with its owner ID (p, shared, never changed), the identity id
// and the identity headers the request carries in its place (hdr, nil
// when none; kept, never changed).
func (c *Caller) SetIdentity(p *owner.PrincipalOwner, id Identity, hdr http.Header) {
	c.principal, c.identity, c.headers = p, id, hdr
}

// SetKey records the owner of the function key the host checked (see
// owner.KeyOwner). Only the link that checks keys sets it: a key nobody
// checked (an Anonymous app) names no owner.
func (c *Caller) SetKey(id owner.ID) { c.key = id }

// Owner is whom what the request leaves behind counts for: its verified
// principal, else its verified function key, else its client address.
// Nothing the client merely sends (an Authorization header nobody
// checked, a key of an Anonymous app, an Mcp-Session-Id) makes another
// owner: every unauthenticated request of one address has one owner.
func (c *Caller) Owner() owner.ID {
	switch {
	case c.principal != nil && c.principal.Principal() != "":
		return c.principal.ID()
	case c.key != "":
		return c.key
	}
	return c.address
}

// Address is the owner named by the request's client address.
func (c *Caller) Address() owner.ID { return c.address }

// Principal is the verified access token's principal, "" when the request
// carried none.
func (c *Caller) Principal() string {
	if c.principal == nil {
		return ""
	}
	return c.principal.Principal()
}

// Identity is the verified access token's identity, nil when the request
// carried none (or c is nil: a call no request made, a task run again).
func (c *Caller) Identity() Identity {
	if c == nil {
		return nil
	}
	return c.identity
}

// IdentityHeaders are the identity headers the OAuth guard set on the
// request from its verified token (X-MS-CLIENT-PRINCIPAL…, and the token
// itself when the app asks for it); nil when it set none (or c is nil).
// They are shared: read only.
func (c *Caller) IdentityHeaders() http.Header {
	if c == nil {
		return nil
	}
	return c.headers
}
