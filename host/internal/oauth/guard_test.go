package oauth

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/caller"
	"github.com/funcmcp/funcmcp/internal/testutil"
)

const (
	testAudience = "api://funcmcp-test"
	adminScope   = "api://funcmcp-test/Tools.Admin"
	readScope    = "api://funcmcp-test/Tools.Read"
)

// seen is what the protected handler saw of a request let through.
type seen struct {
	principal string
	id        *Identity
	header    http.Header
	body      string
}

type fixture struct {
	op    *testutil.OIDC
	cfg   *Config
	guard *Guard
	srv   http.Handler
	last  chan seen
}

func newFixture(t *testing.T, edit func(c *Config)) *fixture {
	t.Helper()
	op := testutil.StartOIDC(t)
	cfg := &Config{Issuer: op.URL, Audiences: []string{testAudience}, Scopes: []string{readScope}}
	if edit != nil {
		edit(cfg)
	}
	v := NewVerifier(t.Context(), cfg, nil)
	g := NewGuard(cfg, v, Options{
		Endpoint: "/runtime/webhooks/mcp",
		Declared: []string{adminScope, OfflineAccess},
	})
	f := &fixture{op: op, cfg: cfg, guard: g, last: make(chan seen, 64)}
	f.srv = g.Protect(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		c := caller.Of(r)
		id, _ := c.Identity().(*Identity)
		f.last <- seen{principal: c.Principal(), id: id, header: r.Header.Clone(), body: string(body)}
		w.WriteHeader(http.StatusOK)
	}))
	return f
}

func (f *fixture) do(t *testing.T, token string, body string) *http.Response {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7071/runtime/webhooks/mcp", strings.NewReader(body))
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, r)
	return w.Result()
}

func (f *fixture) claims(scopes ...string) jwt.MapClaims {
	return testutil.Claims(f.op.URL, testAudience, "user-1", scopes...)
}

const callList = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`

func TestValidTokenPassesWithPrincipal(t *testing.T) {
	f := newFixture(t, nil)
	resp := f.do(t, f.op.Token(t, f.claims("Tools.Read")), callList)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	s := <-f.last
	assert.Equal(t, "oidc|"+f.op.URL+"|user-1", s.principal)
	assert.Equal(t, []string{"Tools.Read"}, s.id.Scopes)
	assert.Equal(t, callList, s.body)
	assert.Empty(t, s.header.Get("Authorization"), "the token is not passed on")
	assert.Empty(t, s.header.Get(HeaderAccessToken))
	assert.Equal(t, "user-1", s.header.Get(HeaderPrincipalID))
	assert.Equal(t, "oidc", s.header.Get(HeaderPrincipalIDP))
	raw, err := base64.StdEncoding.DecodeString(s.header.Get(HeaderPrincipal))
	require.NoError(t, err)
	var p clientPrincipal
	require.NoError(t, json.Unmarshal(raw, &p))
	assert.Equal(t, "oidc", p.AuthType)
	assert.Contains(t, p.Claims, claimEntry{"sub", "user-1"})
	assert.Contains(t, p.Claims, claimEntry{"scp", "Tools.Read"})
}

// challengeOf parses a WWW-Authenticate Bearer challenge's parameters.
func challengeOf(t *testing.T, resp *http.Response) map[string]string {
	t.Helper()
	v := resp.Header.Get("WWW-Authenticate")
	rest, ok := strings.CutPrefix(v, "Bearer ")
	require.True(t, ok, "challenge %q", v)
	out := map[string]string{}
	for rest != "" {
		k, after, ok := strings.Cut(rest, `="`)
		require.True(t, ok, "challenge %q", v)
		val, tail, ok := strings.Cut(after, `"`)
		require.True(t, ok, "challenge %q", v)
		out[strings.TrimSpace(k)] = val
		rest = strings.TrimPrefix(strings.TrimSpace(tail), ",")
		rest = strings.TrimSpace(rest)
	}
	return out
}

func TestNoTokenIsChallenged(t *testing.T) {
	f := newFixture(t, nil)
	resp := f.do(t, "", callList)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	c := challengeOf(t, resp)
	assert.Equal(t, "http://127.0.0.1:7071/.well-known/oauth-protected-resource/runtime/webhooks/mcp", c["resource_metadata"])
	assert.Equal(t, readScope, c["scope"])
	assert.NotContains(t, c, "error", "no error code when no credentials were sent (RFC 6750 §3.1)")
	assert.Empty(t, f.last)
}

func TestRefusedTokens(t *testing.T) {
	f := newFixture(t, nil)
	good := f.op.Token(t, f.claims())
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	require.NoError(t, err)
	signWith := func(method jwt.SigningMethod, key any, kid string, c jwt.MapClaims) string {
		tok := jwt.NewWithClaims(method, c)
		tok.Header["kid"] = kid
		s, err := tok.SignedString(key)
		require.NoError(t, err)
		return s
	}
	b64 := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	payload, _ := json.Marshal(f.claims())
	parts := strings.Split(good, ".")
	sig := []byte(parts[2])
	sig[10] ^= 1
	if sig[10] == '.' {
		sig[10] = 'A'
	}
	tamperedClaims, _ := json.Marshal(testutil.Claims(f.op.URL, testAudience, "admin"))

	now := time.Now()
	for name, token := range map[string]string{
		"bad signature":             parts[0] + "." + parts[1] + "." + string(sig),
		"claims changed":            parts[0] + "." + b64(string(tamperedClaims)) + "." + parts[2],
		"key not in the JWKS":       signWith(jwt.SigningMethodRS256, other, "not-published", f.claims()),
		"published kid, other key":  signWith(jwt.SigningMethodRS256, other, f.op.CurrentKid(), f.claims()),
		"alg none":                  b64(`{"alg":"none","typ":"JWT","kid":"`+f.op.CurrentKid()+`"}`) + "." + b64(string(payload)) + ".",
		"HS256 with the public key": signWith(jwt.SigningMethodHS256, f.op.PublicKeyBytes(), f.op.CurrentKid(), f.claims()),
		"wrong iss":                 f.op.Token(t, testutil.Claims(f.op.URL+"/other", testAudience, "user-1")),
		"wrong aud":                 f.op.Token(t, testutil.Claims(f.op.URL, "api://someone-else", "user-1")),
		"expired":                   f.op.Token(t, withClaims(f.claims(), "exp", now.Add(-2*Leeway).Unix())),
		"no exp":                    f.op.Token(t, withClaims(f.claims(), "exp", nil)),
		"not yet valid":             f.op.Token(t, withClaims(f.claims(), "nbf", now.Add(2*Leeway).Unix())),
		"not a JWT":                 "abc.def.ghi",
		"too large":                 strings.Repeat("a", MaxTokenBytes+1),
	} {
		t.Run(name, func(t *testing.T) {
			resp := f.do(t, token, callList)
			require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
			c := challengeOf(t, resp)
			assert.Equal(t, "invalid_token", c["error"])
			assert.NotEmpty(t, c["resource_metadata"])
			assert.Empty(t, f.last)
		})
	}
	// A small skew is allowed.
	resp := f.do(t, f.op.Token(t, withClaims(f.claims(), "exp", now.Add(-Leeway/2).Unix())), callList)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	<-f.last
}

func withClaims(c jwt.MapClaims, kv ...any) jwt.MapClaims {
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(c, kv[i].(string))
		} else {
			c[kv[i].(string)] = kv[i+1]
		}
	}
	return c
}

func TestMalformedAuthorization(t *testing.T) {
	f := newFixture(t, nil)
	for _, v := range [][]string{{"Basic abc"}, {"Bearer"}, {"Bearer a b"}, {"Bearer x", "Bearer y"}} {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7071/runtime/webhooks/mcp", strings.NewReader(callList))
		r.Header["Authorization"] = v
		w := httptest.NewRecorder()
		f.srv.ServeHTTP(w, r)
		assert.Equal(t, http.StatusUnauthorized, w.Code, "%q", v)
		assert.Contains(t, w.Header().Get("WWW-Authenticate"), `error="invalid_token"`)
	}
}

// TestMissingScopeIsStepUp: the guard lets a valid token through whatever
// the body asks for, body intact (the scopes are checked behind it, on the
// request as the endpoint read it); the refusal it gives for a missing
// scope asks for it with the default scopes, never offline_access.
func TestMissingScopeIsStepUp(t *testing.T) {
	f := newFixture(t, nil)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"admin","arguments":{}}}`
	resp := f.do(t, f.op.Token(t, f.claims("Tools.Read")), call)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	got := <-f.last
	assert.Equal(t, call, got.body)
	require.NotNil(t, got.id)
	assert.Equal(t, []string{adminScope}, got.id.Missing([]string{adminScope}))

	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/runtime/webhooks/mcp", nil)
	hdr := f.guard.InsufficientScope(r, got.id, []string{adminScope, OfflineAccess})
	c := challengeOf(t, &http.Response{Header: hdr})
	assert.Equal(t, "insufficient_scope", c["error"])
	assert.Equal(t, readScope+" "+adminScope, c["scope"])
	assert.NotContains(t, c["scope"], OfflineAccess)
	assert.NotEmpty(t, c["resource_metadata"])
	assert.Equal(t, "WWW-Authenticate", hdr.Get("Access-Control-Expose-Headers"))

	// With the scope (Entra's short name), or an application role, nothing
	// is missing.
	resp = f.do(t, f.op.Token(t, f.claims("Tools.Read", "Tools.Admin")), call)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, (<-f.last).id.Missing([]string{adminScope}))
	resp = f.do(t, f.op.Token(t, withClaims(f.claims(), "roles", []string{"Tools.Admin"})), call)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Empty(t, (<-f.last).id.Missing([]string{adminScope}))
}

func TestKeyRotation(t *testing.T) {
	f := newFixture(t, nil)
	f.guard.v.now = (&testClock{now: time.Now()}).Now // the floor between fetches never passes
	resp := f.do(t, f.op.Token(t, f.claims()), callList)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	<-f.last
	before := f.op.JWKSServed()

	f.op.Rotate(t, true) // a new EC key replaces the RSA one
	resp = f.do(t, f.op.Token(t, f.claims()), callList)
	require.Equal(t, http.StatusOK, resp.StatusCode, "an unknown kid fetches the keys again")
	<-f.last
	assert.Equal(t, before+1, f.op.JWKSServed())

	// Within KeyRefreshEvery of that fetch, another unknown kid does not
	// fetch again.
	f.op.Rotate(t, false)
	resp = f.do(t, f.op.Token(t, f.claims()), callList)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Equal(t, before+1, f.op.JWKSServed(), "unknown kids are rate-limited")
}

func TestMultiTenant(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Tenants = []string{"tenant-a"} })
	f.cfg.Issuer = f.op.MultiTenantIssuer()
	entra := func(tid, iss string) jwt.MapClaims {
		return withClaims(testutil.Claims(iss, testAudience, "pairwise-sub"), "tid", tid, "oid", "object-1")
	}
	resp := f.do(t, f.op.Token(t, entra("tenant-a", f.op.TenantIssuer("tenant-a"))), callList)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	s := <-f.last
	assert.Equal(t, "entra|tenant-a|object-1", s.principal)
	assert.Equal(t, "object-1", s.header.Get(HeaderPrincipalID))
	assert.Equal(t, "aad", s.header.Get(HeaderPrincipalIDP))

	for name, c := range map[string]jwt.MapClaims{
		"tenant not accepted":      entra("tenant-b", f.op.TenantIssuer("tenant-b")),
		"issuer of another tenant": entra("tenant-a", f.op.TenantIssuer("tenant-b")),
		"no tenant":                withClaims(entra("", f.op.TenantIssuer("tenant-a")), "tid", nil),
	} {
		resp := f.do(t, f.op.Token(t, c), callList)
		assert.Equal(t, http.StatusUnauthorized, resp.StatusCode, name)
	}
	assert.Empty(t, f.last)
}

func TestReservedHeadersAreReplacedAndTokenPassedOnOptIn(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.PassToken = true })
	token := f.op.Token(t, f.claims())
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7071/runtime/webhooks/mcp", strings.NewReader(callList))
	r.Header.Set("Authorization", "Bearer "+token)
	r.Header.Set("X-MS-CLIENT-PRINCIPAL-ID", "forged")
	r.Header.Set("X-MS-CLIENT-PRINCIPAL-ROLES", "admin")
	r.Header.Set("x-ms-token-aad-id-token", "forged")
	w := httptest.NewRecorder()
	f.srv.ServeHTTP(w, r)
	require.Equal(t, http.StatusOK, w.Code)
	s := <-f.last
	assert.Equal(t, "user-1", s.header.Get(HeaderPrincipalID))
	assert.Empty(t, s.header.Values("X-Ms-Client-Principal-Roles"))
	assert.Empty(t, s.header.Values("X-Ms-Token-Aad-Id-Token"))
	assert.Equal(t, token, s.header.Get(HeaderAccessToken))
	assert.Empty(t, s.header.Get("Authorization"))
}

func TestMetadata(t *testing.T) {
	f := newFixture(t, nil)
	get := func(target string, hdr map[string]string) (*httptest.ResponseRecorder, ResourceMetadata) {
		r := httptest.NewRequest(http.MethodGet, target, nil)
		for k, v := range hdr {
			r.Header.Set(k, v)
		}
		w := httptest.NewRecorder()
		f.guard.ServeMetadata(w, r)
		var doc ResourceMetadata
		if w.Code == http.StatusOK {
			require.NoError(t, json.Unmarshal(w.Body.Bytes(), &doc))
		}
		return w, doc
	}
	w, doc := get("http://127.0.0.1:7071/.well-known/oauth-protected-resource/runtime/webhooks/mcp", nil)
	require.Equal(t, http.StatusOK, w.Code)
	assert.Equal(t, "*", w.Header().Get("Access-Control-Allow-Origin"))
	assert.Equal(t, ResourceMetadata{
		Resource:               "http://127.0.0.1:7071/runtime/webhooks/mcp",
		AuthorizationServers:   []string{f.op.URL},
		ScopesSupported:        []string{readScope, adminScope},
		BearerMethodsSupported: []string{"header"},
	}, doc)

	// Behind a proxy: ignored unless trusted.
	fwd := map[string]string{"X-Forwarded-Proto": "https", "X-Forwarded-Host": "mcp.example.com"}
	_, doc = get("http://127.0.0.1:7071/.well-known/oauth-protected-resource", fwd)
	assert.Equal(t, "http://127.0.0.1:7071/runtime/webhooks/mcp", doc.Resource)
	f.cfg.TrustForwarded = true
	_, doc = get("http://127.0.0.1:7071/.well-known/oauth-protected-resource", fwd)
	assert.Equal(t, "https://mcp.example.com/runtime/webhooks/mcp", doc.Resource)

	f.cfg.Resource = "api://funcmcp-test"
	_, doc = get("http://127.0.0.1:7071/.well-known/oauth-protected-resource", nil)
	assert.Equal(t, "api://funcmcp-test", doc.Resource)

	r := httptest.NewRequest(http.MethodOptions, "http://127.0.0.1:7071/.well-known/oauth-protected-resource", nil)
	r.Header.Set("Origin", "https://client.example")
	r.Header.Set("Access-Control-Request-Method", "GET")
	w2 := httptest.NewRecorder()
	f.guard.ServeMetadata(w2, r)
	assert.Equal(t, http.StatusNoContent, w2.Code)
	assert.Equal(t, "*", w2.Header().Get("Access-Control-Allow-Origin"))
}

func TestIssuerUnreachableIs503(t *testing.T) {
	cfg := &Config{Issuer: "http://127.0.0.1:1", Audiences: []string{testAudience}}
	g := NewGuard(cfg, NewVerifier(context.Background(), cfg, nil), Options{Endpoint: "/mcp"})
	h := g.Protect(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("let through") }))
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7071/mcp", nil)
	r.Header.Set("Authorization", "Bearer a.b.c")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	assert.Equal(t, http.StatusServiceUnavailable, w.Code)
}

func TestLoad(t *testing.T) {
	lookup := func(m map[string]string) func(string) (string, string) {
		return func(k string) (string, string) {
			if v, ok := m[k]; ok {
				return v, "test " + k
			}
			return "", ""
		}
	}
	c, err := Load(lookup(nil))
	require.NoError(t, err)
	assert.Nil(t, c)

	c, err = Load(lookup(map[string]string{
		SettingIssuer: "https://login.microsoftonline.com/{tenantid}/v2.0", SettingTenants: "a, b",
		SettingAudience: "api://x, 123", SettingScopes: "api://x/user_impersonation,offline_access",
		SettingTrustForwarded: "true",
	}))
	require.NoError(t, err)
	assert.Equal(t, []string{"api://x", "123"}, c.Audiences)
	assert.Equal(t, []string{"api://x/user_impersonation"}, c.Scopes)
	assert.Equal(t, []string{"a", "b"}, c.Tenants)
	assert.True(t, c.TrustForwarded)
	assert.True(t, c.MultiTenant())

	for name, m := range map[string]map[string]string{
		"http off loopback":      {SettingIssuer: "http://idp.example.com", SettingAudience: "a"},
		"no audience":            {SettingIssuer: "https://idp.example.com"},
		"tenantid without list":  {SettingIssuer: "https://idp.example.com/{tenantid}/v2.0", SettingAudience: "a"},
		"tenants without {tid}":  {SettingIssuer: "https://idp.example.com", SettingAudience: "a", SettingTenants: "x"},
		"bad bool":               {SettingIssuer: "https://idp.example.com", SettingAudience: "a", SettingPassToken: "yes please"},
		"issuer with a query":    {SettingIssuer: "https://idp.example.com/?x=1", SettingAudience: "a"},
		"resource with fragment": {SettingIssuer: "https://idp.example.com", SettingResource: "https://x/#f"},
	} {
		_, err := Load(lookup(m))
		var se *SettingError
		assert.ErrorAs(t, err, &se, name)
	}
	c, err = Load(lookup(map[string]string{SettingIssuer: "http://127.0.0.1:9000", SettingResource: "https://mcp.example.com/runtime/webhooks/mcp"}))
	require.NoError(t, err)
	assert.Equal(t, []string{"https://mcp.example.com/runtime/webhooks/mcp"}, c.Audiences, "the resource is the default audience")
}

// BenchmarkProtect measures what the token check adds to a request: a
// valid RS256 token against the cached key set (remembered after its first
// check; "token-unremembered" checks the signature every time), the
// identity headers; "none" is the
// bare handler.
func BenchmarkProtect(b *testing.B) {
	op := testutil.StartOIDC(b)
	cfg := &Config{Issuer: op.URL, Audiences: []string{testAudience}, Scopes: []string{readScope}}
	token := op.Token(b, testutil.Claims(op.URL, testAudience, "user-1", "Tools.Read"))
	body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{"city":"Oslo"}}}`
	sink := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.Copy(io.Discard, r.Body) })
	unremembered := NewVerifier(b.Context(), cfg, nil)
	forget := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		unremembered.cacheMu.Lock()
		clear(unremembered.cache)
		unremembered.cacheMu.Unlock()
		NewGuard(cfg, unremembered, Options{Endpoint: "/mcp"}).Protect(sink).ServeHTTP(w, r)
	})
	for _, bc := range []struct {
		name    string
		handler http.Handler
	}{
		{"token-unremembered", forget},
		{"none", sink},
		{"token", NewGuard(cfg, NewVerifier(b.Context(), cfg, nil), Options{Endpoint: "/mcp"}).Protect(sink)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7071/mcp", strings.NewReader(body))
				r.Header.Set("Authorization", "Bearer "+token)
				w := httptest.NewRecorder()
				bc.handler.ServeHTTP(w, r)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d", w.Code)
				}
			}
		})
	}
}

// TestVerifiedTokensAreRememberedBriefly: a validated token is not checked
// again for CacheFor, never past its exp; then it is checked again (here
// refused: its audience is no longer accepted).
func TestVerifiedTokensAreRememberedBriefly(t *testing.T) {
	op := testutil.StartOIDC(t)
	cfg := &Config{Issuer: op.URL, Audiences: []string{testAudience}}
	v := NewVerifier(t.Context(), cfg, nil)
	clock := time.Now()
	v.now = func() time.Time { return clock }
	long := op.Token(t, testutil.Claims(op.URL, testAudience, "user-1"))
	short := op.Token(t, withClaims(testutil.Claims(op.URL, testAudience, "user-2"), "exp", clock.Add(CacheFor/2).Unix()))
	for _, tok := range []string{long, short} {
		_, err := v.Verify(t.Context(), tok)
		require.NoError(t, err)
	}
	cfg.Audiences = []string{"api://another"} // what a re-check would refuse

	clock = clock.Add(CacheFor / 4)
	id, err := v.Verify(t.Context(), long)
	require.NoError(t, err, "remembered")
	assert.Equal(t, "user-1", id.Subject)

	clock = clock.Add(CacheFor/2 + Leeway + time.Second) // past short's exp and its leeway
	_, err = v.Verify(t.Context(), short)
	require.Error(t, err, "never remembered past exp")

	clock = clock.Add(CacheFor)
	_, err = v.Verify(t.Context(), long)
	require.Error(t, err, "checked again after CacheFor")
}
