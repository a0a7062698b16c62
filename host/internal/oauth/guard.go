package oauth

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// MetadataPath is the well-known path of the protected resource metadata
// (RFC 9728); the metadata of a resource with a path is served at this
// path followed by the resource's path.
const MetadataPath = "/.well-known/oauth-protected-resource"

// Operation is one MCP request a scope may guard.
type Operation struct {
	Method string // a method the table marks Scoped: tools/call, resources/read, prompts/get
	Name   string // the tool or prompt name, the resource URI
}

// Options complete a [Guard].
type Options struct {
	// Endpoint is the path of the MCP endpoint: the resource's path.
	Endpoint string
	// Logger receives the refusals (why, never the token); nil: discard.
	Logger *slog.Logger
	// Required returns the scopes an operation needs beyond a valid token;
	// nil when none does.
	Required func(op Operation) []string
	// Declared are every scope an operation may need, advertised with the
	// default scopes in scopes_supported.
	Declared []string
	// MaxBodyBytes bounds the body read to find the operation (the
	// endpoint's own bound): a larger body is passed on unread, and refused
	// there.
	MaxBodyBytes int64
	// Scoped, when set, says what Required may ask scopes for: a body
	// that cannot ask for any of it (Scoped.MayAsk) is not scanned.
	Scoped *Scoped
}

// Scoped says which operations may need a scope beyond a valid token: a
// call of one of the tools named, a prompts/get when Prompts, a
// resources/read when Resources. Tools are found by their exact name, so a
// body that can call one holds its name as a JSON string; prompts are
// found whatever the case, so any prompts/get may ask for one.
type Scoped struct {
	quoted             [][]byte // the tool names as JSON strings
	prompts, resources bool
}

// The bounds of what Scoped.MayAsk screens: each tool name is one search
// of the body, and the scan it stands in for is one pass.
const (
	maxScreenNames = 8
	maxScreenBytes = 4 << 10
)

// NewScoped returns what may need a scope: the tools named, any prompt
// when prompts, any resource when resources.
func NewScoped(tools []string, prompts, resources bool) *Scoped {
	s := &Scoped{prompts: prompts, resources: resources}
	for _, n := range tools {
		s.quoted = append(s.quoted, []byte(`"`+n+`"`))
	}
	return s
}

// MayAsk reports whether a body may ask for an operation that needs a
// scope. It is false only for a body without escapes, valid UTF-8 (so each
// of its strings is its text as it is), that holds none of the tools' names
// as a string and not "prompts/get" or "resources/read" when those may
// need scopes: such a body names no scoped tool, prompt or resource, which
// Operations would tell only by reading it member by member.
//
// Each name is looked for in the whole body, which a crafted body can make
// slower than the scan it saves: a body over maxScreenBytes, or any body
// when more than maxScreenNames tools need scopes, may ask (it is scanned).
func (s *Scoped) MayAsk(body []byte) bool {
	if len(body) > maxScreenBytes || len(s.quoted) > maxScreenNames ||
		bytes.IndexByte(body, '\\') >= 0 || !utf8.Valid(body) {
		return true
	}
	if s.prompts && bytes.Contains(body, []byte(metadata.MethodPromptsGet)) ||
		s.resources && bytes.Contains(body, []byte(metadata.MethodResourcesRead)) {
		return true
	}
	for _, q := range s.quoted {
		if bytes.Contains(body, q) {
			return true
		}
	}
	return false
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
// (401 with a challenge otherwise) and, for an operation that needs
// scopes, a token that grants them (403 insufficient_scope). A request let
// through carries the principal (owner.WithPrincipal) and the identity
// (WithIdentity) on its context, and the identity headers in place of the
// Authorization header, which is never passed on.
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
		if g.o.Required != nil && r.Method == http.MethodPost {
			ops, body, err := readOperations(r, g.o.MaxBodyBytes, g.o.Scoped)
			if err != nil {
				g.log.Warn("reading the request body failed", "error", err)
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			r.Body = body
			var missing []string
			for _, op := range ops {
				for _, s := range id.Missing(g.o.Required(op)) {
					if !slices.Contains(missing, s) {
						missing = append(missing, s)
					}
				}
			}
			if len(missing) > 0 {
				g.insufficient(w, r, id, missing)
				return
			}
		}
		ctx := WithIdentity(owner.WithPrincipalOwner(r.Context(), id.owner()), id)
		// The request is this handler's to change (its body already is):
		// the headers are edited in place rather than copied.
		r2 := r.WithContext(ctx)
		r2.Header.Del("Authorization")
		StripReserved(r2.Header)
		id.setHeaders(r2.Header)
		if g.cfg.PassToken {
			r2.Header.Set(HeaderAccessToken, token)
		}
		next.ServeHTTP(w, r2)
	})
}

// readOperations reads the operations a JSON-RPC body (one message or a
// batch) asks for, and returns a body that replays it. A body over max or
// not JSON yields no operation: the endpoint refuses it; so does one that
// scoped says asks for nothing scoped (nil scoped: every body is read).
func readOperations(r *http.Request, max int64, scoped *Scoped) ([]Operation, io.ReadCloser, error) {
	if max <= 0 {
		max = 4 << 20
	}
	size := int64(512)
	if r.ContentLength >= 0 && r.ContentLength < max {
		size = r.ContentLength + 1 // room for the read that finds the end
	}
	data, err := readAtMost(r.Body, make([]byte, 0, size), max+1)
	replay := &replayBody{data: data, rest: r.Body}
	if err != nil {
		return nil, nil, err
	}
	if int64(len(data)) > max || scoped != nil && !scoped.MayAsk(data) {
		return nil, replay, nil
	}
	return Operations(data), replay, nil
}

// readAtMost appends what r holds to buf, up to limit bytes.
func readAtMost(r io.Reader, buf []byte, limit int64) ([]byte, error) {
	for int64(len(buf)) < limit {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, min(cap(buf), int(limit)-len(buf)))
		}
		room := buf[len(buf):min(cap(buf), len(buf)+int(limit-int64(len(buf))))]
		n, err := r.Read(room)
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// replayBody reads data, then the rest of the body it was read from.
type replayBody struct {
	data []byte
	rest io.ReadCloser
}

func (b *replayBody) Read(p []byte) (int, error) {
	if len(b.data) > 0 {
		n := copy(p, b.data)
		b.data = b.data[n:]
		return n, nil
	}
	return b.rest.Read(p)
}

func (b *replayBody) Close() error { return b.rest.Close() }

// Operations returns the guarded operations a JSON-RPC body (one message
// or a batch) asks for. It reads the members the MCP endpoint reads, as
// it reads them (names exactly as sent once unescaped; method, name and
// uri as JSON strings), in one pass that builds nothing but the
// operations: a body that is not JSON asks for none.
func Operations(body []byte) []Operation {
	s := jsonx.NewScanner(body)
	s.Space()
	var ops []Operation
	var ok bool
	switch s.Peek() {
	case '{':
		ops, ok = readOperation(&s, nil)
	case '[':
		_, ok = s.Array(func() bool {
			ops, ok = readOperation(&s, ops)
			return ok
		})
	}
	if !ok || !s.End() {
		return nil
	}
	return ops
}

// readOperation reads one message at s and appends its operation, when it
// asks for a guarded one, to ops. A message that is not an object asks for
// none.
func readOperation(s *jsonx.Scanner, ops []Operation) ([]Operation, bool) {
	if s.Peek() != '{' {
		return ops, s.Skip()
	}
	var method *metadata.MethodSpec
	var name, uri []byte // their JSON text between the quotes
	var nameEsc, uriEsc bool
	_, ok := s.Object(func(key []byte, escaped bool) bool {
		switch memberName(key, escaped) {
		case "method":
			method = nil
			if s.Peek() != '"' {
				return s.Skip()
			}
			v, esc, ok := s.String()
			if ok {
				method = guardedMethod(v, esc)
			}
			return ok
		case "params":
			name, uri = nil, nil
			if s.Peek() != '{' {
				return s.Skip()
			}
			_, ok := s.Object(func(key []byte, escaped bool) bool {
				var dst *[]byte
				var dstEsc *bool
				switch memberName(key, escaped) {
				case "name":
					dst, dstEsc = &name, &nameEsc
				case "uri":
					dst, dstEsc = &uri, &uriEsc
				default:
					return s.Skip()
				}
				*dst = nil
				if s.Peek() != '"' {
					return s.Skip()
				}
				v, esc, ok := s.String()
				*dst, *dstEsc = v, esc
				return ok
			})
			return ok
		}
		return s.Skip()
	})
	if !ok {
		return ops, false
	}
	if method == nil {
		return ops, true
	}
	switch method.Target {
	case metadata.TargetTool, metadata.TargetPrompt:
		return append(ops, Operation{Method: method.Name, Name: stringOf(name, nameEsc)}), true
	case metadata.TargetResource:
		return append(ops, Operation{Method: method.Name, Name: stringOf(uri, uriEsc)}), true
	}
	return ops, true
}

// guardedMethod returns the entry of the method a string's text names when
// it is a guarded one (the method table marks it Scoped), else nil.
func guardedMethod(text []byte, escaped bool) *metadata.MethodSpec {
	if escaped {
		text = []byte(stringOf(text, true))
	}
	for _, m := range metadata.ScopedMethods() {
		if string(text) == m.Name {
			return m
		}
	}
	return nil
}

// memberNames are the members read.
var memberNames = [...]string{"method", "params", "name", "uri"}

// memberName is a member name as the endpoint matches it: its text, or
// its decoded text when it holds escapes ("" when they are invalid, which
// the scanner does not let through).
func memberName(key []byte, escaped bool) string {
	if escaped {
		return stringOf(key, true)
	}
	for _, n := range memberNames {
		if string(key) == n {
			return n
		}
	}
	return ""
}

// stringOf decodes a JSON string's text as encoding/json does (invalid
// UTF-8 becomes U+FFFD).
func stringOf(text []byte, escaped bool) string {
	if !escaped && utf8.Valid(text) {
		return string(text)
	}
	s, _ := jsonx.Unescape(text)
	return s
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

// insufficient answers 403 insufficient_scope, naming the scopes to ask
// for: those missing with the default scopes (step-up, SEP-835).
func (g *Guard) insufficient(w http.ResponseWriter, r *http.Request, id *Identity, missing []string) {
	ask := slices.Clone(g.cfg.Scopes)
	for _, s := range missing {
		if s != OfflineAccess && !slices.Contains(ask, s) {
			ask = append(ask, s)
		}
	}
	g.log.Info("access token lacks a scope", "missing", strings.Join(missing, " "), "principalId", id.Subject)
	w.Header().Set("WWW-Authenticate", g.challenge(r, "insufficient_scope", "The access token lacks a scope this request needs.", ask))
	w.Header().Set("Access-Control-Expose-Headers", "WWW-Authenticate")
	writeError(w, http.StatusForbidden, "insufficient_scope", "The access token lacks a scope this request needs: "+strings.Join(missing, " "))
}

func writeError(w http.ResponseWriter, status int, code, description string) {
	data, _ := json.Marshal(map[string]string{"error": code, "error_description": description})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(data)
}
