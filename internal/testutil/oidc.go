package testutil

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// OIDC is a small OpenID provider on 127.0.0.1 for tests: a discovery
// document at <issuer>/.well-known/openid-configuration, a JWKS at /jwks,
// and tokens signed with its current key. An issuer path holding
// "organizations" is served with the Entra ID multi-tenant issuer
// (<base>/{tenantid}/v2.0).
//
// It is also an authorization server for public clients registered with
// [OIDC.RegisterClient]: /authorize approves every valid request at once
// for the subject [OIDC.SignIn] names (redirecting with a code, no page),
// and /token exchanges the code for an access token, checking the client,
// the redirect URI and the PKCE verifier (S256 only).
type OIDC struct {
	// URL is the base URL, the single-tenant issuer.
	URL string

	mu         sync.Mutex
	keys       []signingKey // published; the last one signs
	jwksServed atomic.Int64

	clients  map[string][]string // client id → redirect URIs
	secrets  map[string]string   // confidential client id → secret
	obo      []OnBehalfOfRequest
	codes    map[string]*grant // unexchanged codes
	subject  string            // who signs in at /authorize
	audience string            // aud of issued tokens, "" for the resource asked for
	requests []AuthorizationRequest
}

// AuthorizationRequest is what a client sent to /authorize.
type AuthorizationRequest struct {
	ClientID, RedirectURI, Scope, Resource, State string
	CodeChallengeMethod                           string
}

// grant is an approved authorization request waiting for its code's
// exchange.
type grant struct {
	req       AuthorizationRequest
	challenge string
	subject   string
	expires   time.Time
}

// codeLifetime is how long an authorization code may be exchanged.
const codeLifetime = time.Minute

type signingKey struct {
	kid    string
	method jwt.SigningMethod
	key    crypto.Signer
}

// StartOIDC starts a provider with one RSA key; it stops when the test ends.
func StartOIDC(t testing.TB) *OIDC {
	t.Helper()
	return startOIDC(t, nil)
}

// StartOIDCTLS starts a provider over https (for clients such as MSAL that
// take nothing else) with a certificate that pool trusts.
func StartOIDCTLS(t testing.TB) (o *OIDC, pool *x509.CertPool) {
	t.Helper()
	c := NewTestCert(t)
	return startOIDC(t, c), c.Pool
}

func startOIDC(t testing.TB, cert *TestCert) *OIDC {
	t.Helper()
	o := &OIDC{}
	o.Rotate(t, false)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listening: %v", err)
	}
	o.URL = "http://" + ln.Addr().String()
	o.clients = map[string][]string{}
	o.secrets = map[string]string{}
	o.codes = map[string]*grant{}
	o.subject = "user-1"
	srv := &http.Server{Handler: http.HandlerFunc(o.serve), ReadHeaderTimeout: 10 * time.Second}
	if cert != nil {
		o.URL = "https://" + ln.Addr().String()
		go func() { _ = srv.ServeTLS(ln, cert.CertFile, cert.KeyFile) }()
	} else {
		go func() { _ = srv.Serve(ln) }()
	}
	t.Cleanup(func() { _ = srv.Close() })
	return o
}

// MultiTenantIssuer is the {tenantid} issuer of the provider.
func (o *OIDC) MultiTenantIssuer() string { return o.URL + "/{tenantid}/v2.0" }

// TenantIssuer is the issuer of one tenant under MultiTenantIssuer.
func (o *OIDC) TenantIssuer(tid string) string { return o.URL + "/" + tid + "/v2.0" }

// JWKSServed counts the JWKS requests served.
func (o *OIDC) JWKSServed() int64 { return o.jwksServed.Load() }

func (o *OIDC) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/jwks":
		o.jwksServed.Add(1)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(o.JWKS())
	case strings.HasSuffix(r.URL.Path, "/.well-known/openid-configuration"):
		prefix := strings.TrimSuffix(r.URL.Path, "/.well-known/openid-configuration")
		issuer := o.URL + prefix
		if strings.Contains(prefix, "organizations") {
			issuer = o.MultiTenantIssuer()
		}
		doc := map[string]any{
			"issuer":                                         issuer,
			"jwks_uri":                                       o.URL + "/jwks",
			"authorization_endpoint":                         o.URL + "/authorize",
			"token_endpoint":                                 o.URL + "/token",
			"response_types_supported":                       []string{"code"},
			"grant_types_supported":                          []string{"authorization_code"},
			"code_challenge_methods_supported":               []string{"S256"},
			"token_endpoint_auth_methods_supported":          []string{"none"},
			"authorization_response_iss_parameter_supported": true,
			"subject_types_supported":                        []string{"public"},
			"id_token_signing_alg_values_supported":          []string{"RS256"},
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
	case r.URL.Path == "/authorize":
		o.authorize(w, r)
	case r.URL.Path == "/token":
		o.token(w, r)
	default:
		http.NotFound(w, r)
	}
}

// Rotate makes a new signing key (ECDSA P-256 when ec, else RSA 2048) and
// publishes it in place of the others.
func (o *OIDC) Rotate(t testing.TB, ec bool) {
	t.Helper()
	k := signingKey{kid: randomKid()}
	var err error
	if ec {
		k.method = jwt.SigningMethodES256
		k.key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	} else {
		k.method = jwt.SigningMethodRS256
		k.key, err = rsa.GenerateKey(rand.Reader, 2048)
	}
	if err != nil {
		t.Fatalf("generating a key: %v", err)
	}
	o.mu.Lock()
	o.keys = []signingKey{k}
	o.mu.Unlock()
}

func randomKid() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// JWKS is the published key set.
func (o *OIDC) JWKS() []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	var keys []map[string]string
	for _, k := range o.keys {
		keys = append(keys, publicJWK(k))
	}
	data, _ := json.Marshal(map[string]any{"keys": keys})
	return data
}

func publicJWK(k signingKey) map[string]string {
	b64 := base64.RawURLEncoding.EncodeToString
	switch pub := k.key.Public().(type) {
	case *rsa.PublicKey:
		return map[string]string{"kty": "RSA", "kid": k.kid, "use": "sig", "alg": k.method.Alg(),
			"n": b64(pub.N.Bytes()), "e": b64(big.NewInt(int64(pub.E)).Bytes())}
	case *ecdsa.PublicKey:
		x, y := make([]byte, 32), make([]byte, 32)
		pub.X.FillBytes(x)
		pub.Y.FillBytes(y)
		return map[string]string{"kty": "EC", "kid": k.kid, "use": "sig", "alg": k.method.Alg(), "crv": "P-256",
			"x": b64(x), "y": b64(y)}
	}
	return nil
}

// Claims returns the claims of a token valid for an hour from issuer for
// audience, with the subject and scopes (space-separated in scp).
func Claims(issuer, audience, subject string, scopes ...string) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{
		"iss": issuer, "aud": audience, "sub": subject,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"name": "Test " + subject,
	}
	if len(scopes) > 0 {
		c["scp"] = strings.Join(scopes, " ")
	}
	return c
}

// Token signs claims with the current key.
func (o *OIDC) Token(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	s, err := o.sign(claims)
	if err != nil {
		t.Fatalf("signing: %v", err)
	}
	return s
}

func (o *OIDC) sign(claims jwt.MapClaims) (string, error) {
	o.mu.Lock()
	k := o.keys[len(o.keys)-1]
	o.mu.Unlock()
	tok := jwt.NewWithClaims(k.method, claims)
	tok.Header["kid"] = k.kid
	return tok.SignedString(k.key)
}

// PublicKeyBytes returns the current public key as JWK JSON, the
// "secret" an attacker would use for an HMAC signature with the public key.
func (o *OIDC) PublicKeyBytes() []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	data, _ := json.Marshal(publicJWK(o.keys[len(o.keys)-1]))
	return data
}

// CurrentKid is the key id of the signing key.
func (o *OIDC) CurrentKid() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.keys[len(o.keys)-1].kid
}

// RegisterClient registers a public client (no secret) with its redirect
// URIs, matched exactly.
func (o *OIDC) RegisterClient(id string, redirectURIs ...string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.clients[id] = redirectURIs
}

// SignIn names the subject /authorize approves requests for from now on
// (default "user-1").
func (o *OIDC) SignIn(subject string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.subject = subject
}

// SetAudience makes every token /token issues carry aud (as Microsoft
// Entra ID puts the application id there, whatever resource was asked
// for); "" (the default) uses the resource the client asked for.
func (o *OIDC) SetAudience(aud string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.audience = aud
}

// AuthorizationRequests returns the requests /authorize approved.
func (o *OIDC) AuthorizationRequests() []AuthorizationRequest {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]AuthorizationRequest(nil), o.requests...)
}

// authorize serves the authorization endpoint (RFC 6749 4.1.1, PKCE RFC
// 7636): a request from a registered client to one of its redirect URIs
// is approved at once, redirecting with a code; an unknown client or
// redirect URI gets 400 (never a redirect); other errors are redirected.
func (o *OIDC) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	req := AuthorizationRequest{ClientID: q.Get("client_id"), RedirectURI: q.Get("redirect_uri"), Scope: q.Get("scope"),
		Resource: q.Get("resource"), State: q.Get("state"), CodeChallengeMethod: q.Get("code_challenge_method")}
	o.mu.Lock()
	uris, known := o.clients[req.ClientID]
	subject := o.subject
	o.mu.Unlock()
	if !known || !slices.Contains(uris, req.RedirectURI) {
		http.Error(w, "unknown client or redirect URI", http.StatusBadRequest)
		return
	}
	back := func(params url.Values) {
		u, _ := url.Parse(req.RedirectURI)
		v := u.Query()
		for k, vs := range params {
			v[k] = vs
		}
		if req.State != "" {
			v.Set("state", req.State)
		}
		v.Set("iss", o.URL)
		u.RawQuery = v.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	}
	challenge := q.Get("code_challenge")
	switch {
	case q.Get("response_type") != "code":
		back(url.Values{"error": {"unsupported_response_type"}})
		return
	case req.CodeChallengeMethod != "S256" || len(challenge) != 43:
		back(url.Values{"error": {"invalid_request"}, "error_description": {"PKCE with S256 is required"}})
		return
	}
	code := randomKid() + randomKid()
	o.mu.Lock()
	o.codes[code] = &grant{req: req, challenge: challenge, subject: subject, expires: time.Now().Add(codeLifetime)}
	o.requests = append(o.requests, req)
	o.mu.Unlock()
	back(url.Values{"code": {code}})
}

// token serves the token endpoint for the authorization_code grant: the
// code opens once, for its client and redirect URI, with the verifier
// whose S256 digest is the challenge.
func (o *OIDC) token(w http.ResponseWriter, r *http.Request) {
	fail := func(code, desc string) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
	}
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		fail("invalid_request", "POST a form")
		return
	}
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
	case grantJWTBearer:
		o.onBehalfOf(w, r, fail)
		return
	default:
		fail("unsupported_grant_type", "only authorization_code and on-behalf-of")
		return
	}
	// A public client names itself in the form, or in HTTP Basic with an
	// empty secret (what clients that try header authentication first send).
	clientID := r.PostForm.Get("client_id")
	if id, secret, ok := r.BasicAuth(); ok {
		if u, err := url.QueryUnescape(id); err == nil && secret == "" && (clientID == "" || clientID == u) {
			clientID = u
		} else {
			fail("invalid_client", "public clients have no secret")
			return
		}
	}
	code := r.PostForm.Get("code")
	o.mu.Lock()
	g := o.codes[code]
	delete(o.codes, code) // a code opens once, right or wrong
	aud := o.audience
	o.mu.Unlock()
	verifier := r.PostForm.Get("code_verifier")
	sum := sha256.Sum256([]byte(verifier))
	switch {
	case g == nil || time.Now().After(g.expires):
		fail("invalid_grant", "unknown, used or expired code")
		return
	case clientID != g.req.ClientID:
		fail("invalid_grant", "the code was issued to another client")
		return
	case r.PostForm.Get("redirect_uri") != g.req.RedirectURI:
		fail("invalid_grant", "redirect_uri differs from the authorization request's")
		return
	case len(verifier) < 43 || len(verifier) > 128 ||
		subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(g.challenge)) != 1:
		fail("invalid_grant", "the code_verifier does not match the code_challenge")
		return
	}
	if aud == "" {
		aud = g.req.Resource
		if res := r.PostForm.Get("resource"); res != "" {
			aud = res
		}
	}
	if aud == "" {
		aud = g.req.ClientID
	}
	// Scopes as Entra ID puts them in scp: the short name of an
	// api://<app>/<name> scope.
	var scopes []string
	for s := range strings.FieldsSeq(g.req.Scope) {
		if i := strings.LastIndexByte(s, '/'); i >= 0 {
			s = s[i+1:]
		}
		scopes = append(scopes, s)
	}
	claims := Claims(o.URL, aud, g.subject, scopes...)
	claims["azp"] = g.req.ClientID
	tok, err := o.sign(claims)
	if err != nil {
		fail("server_error", err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600, "scope": g.req.Scope})
}

// grantJWTBearer is the grant type of the on-behalf-of flow.
const grantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// OnBehalfOfRequest is an on-behalf-of exchange /token served.
type OnBehalfOfRequest struct {
	ClientID, Scope string
	// Subject is the subject of the user's token exchanged.
	Subject string
}

// RegisterConfidentialClient registers a client with a secret, which may
// exchange a user's token for another by the on-behalf-of flow.
func (o *OIDC) RegisterConfidentialClient(id, secret string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.secrets[id] = secret
}

// OnBehalfOfRequests returns the on-behalf-of exchanges served.
func (o *OIDC) OnBehalfOfRequests() []OnBehalfOfRequest {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]OnBehalfOfRequest(nil), o.obo...)
}

// onBehalfOf serves the on-behalf-of grant as Microsoft Entra ID does: a
// confidential client (its secret in the form or in HTTP Basic) sends a
// user's token issued to it (aud: its id or api://<id>, signed by this
// provider, unexpired) and a scope; it gets a token for the scope's
// resource with the same subject.
func (o *OIDC) onBehalfOf(w http.ResponseWriter, r *http.Request, fail func(code, desc string)) {
	id, secret := r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	if u, p, ok := r.BasicAuth(); ok {
		id, secret = u, p
	}
	o.mu.Lock()
	want, known := o.secrets[id]
	o.mu.Unlock()
	if !known || subtle.ConstantTimeCompare([]byte(want), []byte(secret)) != 1 {
		fail("invalid_client", "unknown client or wrong secret")
		return
	}
	if r.PostForm.Get("requested_token_use") != "on_behalf_of" {
		fail("invalid_request", "requested_token_use must be on_behalf_of")
		return
	}
	user, err := jwt.Parse(r.PostForm.Get("assertion"), o.keyOf, jwt.WithValidMethods([]string{"RS256", "ES256"}),
		jwt.WithExpirationRequired(), jwt.WithAudience(id, "api://"+id))
	if err != nil {
		fail("invalid_grant", "the assertion is not a valid token for this client: "+err.Error())
		return
	}
	claims := user.Claims.(jwt.MapClaims)
	scope := r.PostForm.Get("scope")
	var resource string
	var scopes, granted []string
	for s := range strings.FieldsSeq(scope) {
		switch s {
		case "openid", "profile", "offline_access":
			continue
		}
		granted = append(granted, s)
		if i := strings.LastIndexByte(s, '/'); i > len("https://") {
			resource, s = s[:i], s[i+1:]
		}
		scopes = append(scopes, s)
	}
	if resource == "" {
		fail("invalid_scope", "no scope of a resource")
		return
	}
	sub, _ := claims["sub"].(string)
	out := Claims(o.URL, resource, sub, scopes...)
	out["azp"] = id
	for _, k := range []string{"tid", "oid", "name", "preferred_username"} {
		if v, ok := claims[k]; ok {
			out[k] = v
		}
	}
	tok, err := o.sign(out)
	if err != nil {
		fail("server_error", err.Error())
		return
	}
	o.mu.Lock()
	o.obo = append(o.obo, OnBehalfOfRequest{ClientID: id, Scope: scope, Subject: sub})
	o.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(map[string]any{"access_token": tok, "token_type": "Bearer", "expires_in": 3600,
		"ext_expires_in": 3600, "scope": strings.Join(granted, " ")})
}

// keyOf finds the public key of a token this provider signed.
func (o *OIDC) keyOf(t *jwt.Token) (any, error) {
	kid, _ := t.Header["kid"].(string)
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, k := range o.keys {
		if k.kid == kid {
			return k.key.Public(), nil
		}
	}
	return nil, errors.New("unknown key id")
}
