package testutil

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net"
	"net/http"
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
type OIDC struct {
	// URL is the base URL, the single-tenant issuer.
	URL string

	mu         sync.Mutex
	keys       []signingKey // published; the last one signs
	jwksServed atomic.Int64
}

type signingKey struct {
	kid    string
	method jwt.SigningMethod
	key    crypto.Signer
}

// StartOIDC starts a provider with one RSA key; it stops when the test ends.
func StartOIDC(t testing.TB) *OIDC {
	t.Helper()
	o := &OIDC{}
	o.Rotate(t, false)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listening: %v", err)
	}
	o.URL = "http://" + ln.Addr().String()
	srv := &http.Server{Handler: http.HandlerFunc(o.serve), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
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
			"issuer":                                issuer,
			"jwks_uri":                              o.URL + "/jwks",
			"authorization_endpoint":                o.URL + "/authorize",
			"token_endpoint":                        o.URL + "/token",
			"response_types_supported":              []string{"code"},
			"subject_types_supported":               []string{"public"},
			"id_token_signing_alg_values_supported": []string{"RS256"},
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
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
	o.mu.Lock()
	k := o.keys[len(o.keys)-1]
	o.mu.Unlock()
	tok := jwt.NewWithClaims(k.method, claims)
	tok.Header["kid"] = k.kid
	s, err := tok.SignedString(k.key)
	if err != nil {
		t.Fatalf("signing: %v", err)
	}
	return s
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
