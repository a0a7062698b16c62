package oauth

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/funcmcp/funcmcp/host/internal/caller"
)

// MetadataPath is the well-known path of the protected resource metadata
// (RFC 9728); the metadata of a resource with a path is served at this
// path followed by the resource's path.
const MetadataPath = "/.well-known/oauth-protected-resource"

// Options complete a [Guard].
type Options struct {
	// Endpoint is the path of the MCP endpoint: the resource's path.
	Endpoint string
	// Logger receives the refusals (why, never the token); nil: discard.
	Logger *slog.Logger
	// Declared are every scope an operation may need, advertised with the
	// default scopes in scopes_supported.
	Declared []string
}

// Guard asks for and validates access tokens on the MCP endpoints and
// serves the protected resource metadata.
type Guard struct {
	cfg      *Config
	v        *Verifier
	o        Options
	log      *slog.Logger
	supports []string // scopes_supported
}

// NewGuard returns the guard of cfg's resource server, validating with v.
func NewGuard(cfg *Config, v *Verifier, o Options) *Guard {
	g := &Guard{cfg: cfg, v: v, o: o, log: o.Logger}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	for _, s := range append(slices.Clone(cfg.Scopes), o.Declared...) {
		if s != OfflineAccess && !slices.Contains(g.supports, s) {
			g.supports = append(g.supports, s)
		}
	}
	return g
}

// ScopesSupported returns the scopes advertised in the metadata.
func (g *Guard) ScopesSupported() []string { return slices.Clone(g.supports) }

// publicBase is scheme://host of the request as clients see it.
func (g *Guard) publicBase(r *http.Request) string {
	scheme, host := "http", r.Host
	if r.TLS != nil {
		scheme = "https"
	}
	if g.cfg.TrustForwarded {
		if p := firstValue(r.Header.Get("X-Forwarded-Proto")); p == "http" || p == "https" {
			scheme = p
		}
		if h := firstValue(r.Header.Get("X-Forwarded-Host")); h != "" && !strings.ContainsAny(h, "/?#@ \"\\") {
			host = h
		}
	}
	return scheme + "://" + host
}

func firstValue(v string) string {
	v, _, _ = strings.Cut(v, ",")
	return strings.ToLower(strings.TrimSpace(v))
}

// resource is the resource identifier for r.
func (g *Guard) resource(r *http.Request) string {
	if g.cfg.Resource != "" {
		return g.cfg.Resource
	}
	return g.publicBase(r) + g.o.Endpoint
}

// metadataURL is the path-inserted metadata URL of the endpoint.
func (g *Guard) metadataURL(r *http.Request) string {
	return g.publicBase(r) + MetadataPath + g.o.Endpoint
}

// authorizationServer is the issuer advertised: a multi-tenant issuer with
// one accepted tenant names it; with more, Entra's "organizations".
func (g *Guard) authorizationServer() string {
	if !g.cfg.MultiTenant() {
		return g.cfg.Issuer
	}
	t := "organizations"
	if len(g.cfg.Tenants) == 1 {
		t = g.cfg.Tenants[0]
	}
	return strings.ReplaceAll(g.cfg.Issuer, TenantPlaceholder, t)
}

// ResourceMetadata is the protected resource metadata document.
type ResourceMetadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
}

// ServeMetadata serves the protected resource metadata, without
// authentication and readable from any origin (it holds nothing secret).
func (g *Guard) ServeMetadata(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodOptions:
		h.Set("Access-Control-Allow-Methods", "GET, HEAD, OPTIONS")
		h.Set("Access-Control-Allow-Headers", "*")
		h.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
		return
	case http.MethodGet, http.MethodHead:
	default:
		h.Set("Allow", "GET, HEAD, OPTIONS")
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	doc := ResourceMetadata{
		Resource:               g.resource(r),
		AuthorizationServers:   []string{g.authorizationServer()},
		ScopesSupported:        g.supports,
		BearerMethodsSupported: []string{"header"},
	}
	data, _ := json.Marshal(doc)
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "max-age=300")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(data)
	}
}

// BearerToken returns the bearer token of an Authorization header's
// values: ErrNoToken when there is none, ErrMalformed when it is not
// exactly one "Bearer <token68>", ErrTooLarge over MaxTokenBytes.
func BearerToken(values []string) (string, error) {
	switch len(values) {
	case 0:
		return "", ErrNoToken
	case 1:
	default:
		return "", ErrMalformed
	}
	v := values[0]
	if len(v) > MaxTokenBytes+len("Bearer ") {
		return "", ErrTooLarge
	}
	scheme, token, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", ErrMalformed
	}
	for i := 0; i < len(token); i++ {
		if !token68[token[i]] {
			return "", ErrMalformed
		}
	}
	return token, nil
}

// token68 marks the bytes of a token68 (RFC 9110): letters, digits and
// "-._~+/=".
var token68 = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("-._~+/=", byte(c)) >= 0
	}
	return t
}()

// StripReserved removes the identity headers a client sent: only the
// platform sets them (see [IsReserved]).
func StripReserved(h http.Header) {
	for k := range h {
		if IsReserved(k) {
			delete(h, k)
		}
	}
}

// Protect wraps an MCP endpoint: a request needs a valid access token
// (401 with a challenge otherwise). A request let through has the
// principal and the identity in its record (caller.Caller.SetIdentity),
// and the identity headers in place of the Authorization header,
// which is never passed on. Whether the token grants the scopes an
// operation needs is decided behind it, on the request as the endpoint
// read it, once (see [Guard.InsufficientScope]): the guard never reads
// the body.
func (g *Guard) Protect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		token, err := BearerToken(r.Header.Values("Authorization"))
		if err != nil {
			if !errors.Is(err, ErrNoToken) {
				err = &InvalidTokenError{err}
			}
			g.refuse(w, r, err)
			return
		}
		id, err := g.v.Verify(r.Context(), token)
		if err != nil {
			g.refuse(w, r, err)
			return
		}
		// The request is this handler's to change: the headers are edited
		// in place rather than copied.
		r, c := caller.Ensure(r)
		r.Header.Del("Authorization")
		StripReserved(r.Header)
		hdr := make(http.Header, len(identityHeaders)+1)
		id.setHeaders(hdr)
		if g.cfg.PassToken {
			hdr.Set(HeaderAccessToken, token)
		}
		for k, v := range hdr {
			r.Header[k] = v
		}
		c.SetIdentity(id.owner(), id, hdr)
		next.ServeHTTP(w, r)
	})
}

// quote is a quoted-string of an auth-param: backslash and quote escaped,
// control characters dropped.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteRune(c)
		case c < 0x20 || c == 0x7f:
		default:
			b.WriteRune(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// challenge builds a WWW-Authenticate Bearer challenge.
func (g *Guard) challenge(r *http.Request, errCode, description string, scopes []string) string {
	var parts []string
	if errCode != "" {
		parts = append(parts, "error="+quote(errCode), "error_description="+quote(description))
	}
	parts = append(parts, "resource_metadata="+quote(g.metadataURL(r)))
	if len(scopes) > 0 {
		parts = append(parts, "scope="+quote(strings.Join(scopes, " ")))
	}
	return "Bearer " + strings.Join(parts, ", ")
}

// refuse answers a request without a valid token: 401 with the challenge
// (error="invalid_token" when a token was sent), or 503 when the issuer's
// keys cannot be had. The reason is logged, never told.
func (g *Guard) refuse(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, ErrUnavailable) {
		g.log.Error("validating an access token failed", "error", err)
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "The authorization server's keys cannot be read.")
		return
	}
	code, desc := "", ""
	if !errors.Is(err, ErrNoToken) {
		code, desc = "invalid_token", "The access token is missing, malformed, expired or not for this resource."
		g.log.Info("access token refused", "reason", err.Error(), "remote", r.RemoteAddr)
	}
	w.Header().Set("WWW-Authenticate", g.challenge(r, code, desc, g.cfg.Scopes))
	w.Header().Set("Access-Control-Expose-Headers", "WWW-Authenticate")
	if code == "" {
		code, desc = "invalid_request", "An access token is required."
	}
	writeError(w, http.StatusUnauthorized, code, desc)
}

// InsufficientScope returns the headers of the 403 insufficient_scope
// that refuses a request of r whose token (of id) lacks the scopes
// missing: the challenge naming the scopes to ask for, those missing with
// the default scopes (step-up, SEP-835). The refusal is logged.
func (g *Guard) InsufficientScope(r *http.Request, id *Identity, missing []string) http.Header {
	ask := slices.Clone(g.cfg.Scopes)
	for _, s := range missing {
		if s != OfflineAccess && !slices.Contains(ask, s) {
			ask = append(ask, s)
		}
	}
	subject := ""
	if id != nil {
		subject = id.Subject
	}
	g.log.Info("access token lacks a scope", "missing", strings.Join(missing, " "), "principalId", subject)
	return http.Header{
		"Www-Authenticate":              {g.challenge(r, "insufficient_scope", "The access token lacks a scope this request needs.", ask)},
		"Access-Control-Expose-Headers": {"WWW-Authenticate"},
	}
}

func writeError(w http.ResponseWriter, status int, code, description string) {
	data, _ := json.Marshal(map[string]string{"error": code, "error_description": description})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}
