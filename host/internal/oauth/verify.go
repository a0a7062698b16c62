package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/time/rate"
)

// Bounds of token validation.
const (
	// MaxTokenBytes bounds an access token; a longer one is refused
	// unparsed (Entra tokens stay well under 8 KiB).
	MaxTokenBytes = 16 << 10
	// MaxDocumentBytes bounds the discovery document and the JWKS.
	MaxDocumentBytes = 1 << 20
	// Leeway is the clock skew allowed on exp and nbf.
	Leeway = time.Minute
	// KeyRefreshEvery is how often, at most, an unknown key id makes the
	// JWKS be fetched again (once at once, then once per period).
	KeyRefreshEvery = 5 * time.Minute
	// KeyRefreshInterval is how often the JWKS is fetched anyway.
	KeyRefreshInterval = time.Hour
	// DiscoveryRetry is how long a failed discovery is remembered before
	// the next request tries again.
	DiscoveryRetry = 10 * time.Second
	// CacheFor is how long a validated token is remembered (never past its
	// exp): a client's next requests with it skip the signature check.
	CacheFor = time.Minute
	// CacheEntries bounds the remembered tokens; when full, the cache is
	// emptied.
	CacheEntries = 4096
	// fetchTimeout bounds one discovery or JWKS request.
	fetchTimeout = 10 * time.Second
)

// Algorithms are the signature algorithms accepted: asymmetric only. An
// HMAC algorithm (whose "key" an attacker could take from the JWKS) and
// "none" are never accepted.
var Algorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// Typed validation failures. Every one is answered 401 invalid_token; the
// kind is logged, never told to the client.
var (
	// ErrNoToken: the request has no bearer token.
	ErrNoToken = errors.New("no bearer token")
	// ErrMalformed: the Authorization header is not one Bearer token.
	ErrMalformed = errors.New("the Authorization header is not one Bearer token")
	// ErrTooLarge: the token is over MaxTokenBytes.
	ErrTooLarge = errors.New("the token is too large")
	// ErrTenant: the token's tenant is not accepted.
	ErrTenant = errors.New("the token's tenant is not accepted")
	// ErrUnavailable: the issuer's keys could not be fetched.
	ErrUnavailable = errors.New("the issuer's keys are unavailable")
)

// InvalidTokenError says why a token was refused.
type InvalidTokenError struct{ Err error }

func (e *InvalidTokenError) Error() string { return "invalid token: " + e.Err.Error() }
func (e *InvalidTokenError) Unwrap() error { return e.Err }

// Verifier validates access tokens against the issuer's keys, found by
// OpenID discovery on first use.
type Verifier struct {
	cfg    *Config
	client *http.Client
	ctx    context.Context // ends the JWKS refresh
	now    func() time.Time

	mu       sync.Mutex
	keys     keyfunc.Keyfunc
	failedAt time.Time
	lastErr  error
	// JWKSURL is the key set URL discovery found, "" before.
	jwksURL string

	cacheMu sync.RWMutex // readers (a remembered token) do not wait for each other
	cache   map[[sha256.Size]byte]cachedToken
}

// cachedToken is a validated token's identity, good until until.
type cachedToken struct {
	id    *Identity
	until time.Time
}

// NewVerifier returns a verifier of cfg's tokens. client fetches the
// discovery document and the keys (nil: a client with a 10s timeout); ctx
// ends the background refresh of the keys.
func NewVerifier(ctx context.Context, cfg *Config, client *http.Client) *Verifier {
	if client == nil {
		client = &http.Client{Timeout: fetchTimeout}
	}
	limited := *client
	limited.Transport = limitBody{next: client.Transport}
	return &Verifier{cfg: cfg, client: &limited, ctx: ctx, now: time.Now, cache: map[[sha256.Size]byte]cachedToken{}}
}

// limitBody cuts every response body at MaxDocumentBytes: the JWKS reader
// decodes what it gets without a bound of its own.
type limitBody struct{ next http.RoundTripper }

func (l limitBody) RoundTrip(r *http.Request) (*http.Response, error) {
	next := l.next
	if next == nil {
		next = http.DefaultTransport
	}
	resp, err := next.RoundTrip(r)
	if err == nil {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(resp.Body, MaxDocumentBytes), resp.Body}
	}
	return resp, err
}

// discoveryIssuer is the issuer whose discovery document is read: a
// multi-tenant issuer's is "organizations" (Entra's document for work and
// school accounts, whose issuer holds the placeholder).
func (v *Verifier) discoveryIssuer() string {
	return strings.ReplaceAll(v.cfg.Issuer, TenantPlaceholder, "organizations")
}

// keyFunc returns the key lookup, running discovery when it has not
// succeeded yet (at most once per DiscoveryRetry after a failure).
func (v *Verifier) keyFunc(ctx context.Context) (keyfunc.Keyfunc, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.keys != nil {
		return v.keys, nil
	}
	if !v.failedAt.IsZero() && v.now().Sub(v.failedAt) < DiscoveryRetry {
		return nil, v.lastErr
	}
	k, err := v.discover(ctx)
	if err != nil {
		v.failedAt, v.lastErr = v.now(), fmt.Errorf("%w: %w", ErrUnavailable, err)
		return nil, v.lastErr
	}
	v.keys = k
	return k, nil
}

// discover reads the issuer's OpenID configuration and starts the key set.
func (v *Verifier) discover(ctx context.Context) (keyfunc.Keyfunc, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	where := strings.TrimSuffix(v.discoveryIssuer(), "/") + "/.well-known/openid-configuration"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, where, nil)
	if err != nil {
		return nil, fmt.Errorf("reading the OpenID configuration: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := v.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("reading the OpenID configuration: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("reading the OpenID configuration %s: status %d", where, resp.StatusCode)
	}
	var doc struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		return nil, fmt.Errorf("reading the OpenID configuration %s: %w", where, err)
	}
	if doc.Issuer != v.cfg.Issuer {
		return nil, fmt.Errorf("the OpenID configuration %s names issuer %q, not %q", where, doc.Issuer, v.cfg.Issuer)
	}
	u, err := url.Parse(doc.JWKSURI)
	if err != nil || !(u.Scheme == "https" || u.Scheme == "http" && isLoopback(u.Hostname())) {
		return nil, fmt.Errorf("the OpenID configuration %s has no https jwks_uri", where)
	}
	k, err := keyfunc.NewDefaultOverrideCtx(v.ctx, []string{doc.JWKSURI}, keyfunc.Override{
		Client:            v.client,
		HTTPTimeout:       fetchTimeout,
		RefreshInterval:   KeyRefreshInterval,
		RefreshUnknownKID: rate.NewLimiter(rate.Every(KeyRefreshEvery), 1),
		// An unknown kid never waits for the limiter (its next turn is
		// minutes away, past this bound, so the wait fails at once); the
		// bound also covers the fetch itself.
		RateLimitWaitMax:          fetchTimeout,
		RefreshErrorHandlerFunc:   func(string) func(context.Context, error) { return func(context.Context, error) {} },
		NoErrorReturnFirstHTTPReq: new(false),
	})
	if err != nil {
		return nil, fmt.Errorf("reading the issuer's keys %s: %w", doc.JWKSURI, err)
	}
	v.jwksURL = doc.JWKSURI
	return k, nil
}

// Verify validates a raw access token and returns what it says of the
// caller (shared: read-only). A token validated less than CacheFor ago, and
// not expired since, is not checked again.
func (v *Verifier) Verify(ctx context.Context, raw string) (*Identity, error) {
	if len(raw) > MaxTokenBytes {
		return nil, &InvalidTokenError{ErrTooLarge}
	}
	key := sha256.Sum256([]byte(raw))
	now := v.now()
	v.cacheMu.RLock()
	c, ok := v.cache[key]
	v.cacheMu.RUnlock()
	if ok && now.Before(c.until) {
		return c.id, nil
	}
	id, exp, err := v.verify(ctx, raw)
	if err != nil {
		return nil, err
	}
	until := now.Add(CacheFor)
	if exp.Before(until) {
		until = exp
	}
	v.cacheMu.Lock()
	if len(v.cache) >= CacheEntries {
		clear(v.cache)
	}
	v.cache[key] = cachedToken{id: id, until: until}
	v.cacheMu.Unlock()
	return id, nil
}

// verify checks a token's signature and claims.
func (v *Verifier) verify(ctx context.Context, raw string) (*Identity, time.Time, error) {
	kf, err := v.keyFunc(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	opts := []jwt.ParserOption{
		jwt.WithValidMethods(Algorithms),
		jwt.WithLeeway(Leeway),
		jwt.WithExpirationRequired(),
		jwt.WithAudience(v.cfg.Audiences...),
		jwt.WithTimeFunc(v.now),
	}
	if !v.cfg.MultiTenant() {
		opts = append(opts, jwt.WithIssuer(v.cfg.Issuer))
	}
	claims := jwt.MapClaims{}
	if _, err := jwt.ParseWithClaims(raw, claims, kf.KeyfuncCtx(ctx), opts...); err != nil {
		return nil, time.Time{}, &InvalidTokenError{err}
	}
	id := identityOf(claims)
	if v.cfg.MultiTenant() {
		if id.TenantID == "" || !slices.Contains(v.cfg.Tenants, id.TenantID) {
			return nil, time.Time{}, &InvalidTokenError{ErrTenant}
		}
		if want := strings.ReplaceAll(v.cfg.Issuer, TenantPlaceholder, id.TenantID); id.Issuer != want {
			return nil, time.Time{}, &InvalidTokenError{jwt.ErrTokenInvalidIssuer}
		}
	}
	exp, err := claims.GetExpirationTime()
	if err != nil || exp == nil {
		return nil, time.Time{}, &InvalidTokenError{jwt.ErrTokenRequiredClaimMissing}
	}
	if err := id.encodeHeaders(); err != nil {
		return nil, time.Time{}, err
	}
	return id, exp.Time, nil
}
