package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/MicahParks/jwkset"
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
	// KeyRefreshEvery is the floor between two fetches of the JWKS that
	// an unknown key id causes: the first unknown key id fetches at once
	// (the requests that come while it runs wait for that one fetch), the
	// next one only once this much time has passed since; within it, a
	// token with an unknown key id is refused without a fetch. Short, so
	// that an issuer that rotates its key without overlap (a new key, the
	// old one gone) is followed within seconds; a floor, so that a flood
	// of made-up key ids costs the issuer one request per period.
	KeyRefreshEvery = 5 * time.Second
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
	// ErrUnknownKey: the token names a signing key id the issuer's keys
	// do not have, even fetched again (or fetched less than
	// KeyRefreshEvery ago).
	ErrUnknownKey = errors.New("unknown signing key id")
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
	log    *slog.Logger

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
	return &Verifier{cfg: cfg, client: &limited, ctx: ctx, now: time.Now, log: slog.New(slog.DiscardHandler), cache: map[[sha256.Size]byte]cachedToken{}}
}

// WithLogger sets where v logs a fetch of the keys an unknown key id
// causes, and a fetch that failed (nil: nowhere); it returns v. Call it
// before the first Verify.
func (v *Verifier) WithLogger(log *slog.Logger) *Verifier {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	v.log = log
	return v
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
	store, err := jwkset.NewStorageFromHTTP(doc.JWKSURI, jwkset.HTTPClientStorageOptions{
		Client:          v.client,
		Ctx:             v.ctx,
		HTTPTimeout:     fetchTimeout,
		RefreshInterval: KeyRefreshInterval,
		RefreshErrorHandler: func(_ context.Context, err error) {
			v.log.Warn("fetching the issuer's keys failed", "url", doc.JWKSURI, "error", err)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("reading the issuer's keys %s: %w", doc.JWKSURI, err)
	}
	// The library's own refresh on an unknown key id, with no limit of
	// its own: keySet decides when it may run.
	refetch, err := jwkset.NewHTTPClient(jwkset.HTTPClientOptions{
		HTTPURLs:          map[string]jwkset.Storage{doc.JWKSURI: store},
		RefreshUnknownKID: rate.NewLimiter(rate.Inf, 1),
	})
	if err != nil {
		return nil, fmt.Errorf("reading the issuer's keys %s: %w", doc.JWKSURI, err)
	}
	k, err := keyfunc.New(keyfunc.Options{Ctx: v.ctx, Storage: &keySet{Storage: store, refetch: refetch, v: v}})
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

// keySet is the issuer's keys as the token check reads them: the fetched
// key set, fetched again on an unknown key id at most once per
// KeyRefreshEvery (one fetch at a time; the lookups that come while it
// runs wait for it).
type keySet struct {
	jwkset.Storage                // the fetched keys; refreshed every KeyRefreshInterval
	refetch        jwkset.Storage // reading an unknown key id from it fetches the keys again
	v              *Verifier

	mu       sync.Mutex
	last     time.Time     // when the last fetch for an unknown key id started
	inflight chan struct{} // closed when the running fetch ends; nil when none runs
}

// KeyRead returns the key kid names, fetching the keys again when none
// has that id and the floor allows it.
func (s *keySet) KeyRead(ctx context.Context, kid string) (jwkset.JWK, error) {
	k, err := s.Storage.KeyRead(ctx, kid)
	if !errors.Is(err, jwkset.ErrKeyNotFound) {
		return k, err
	}
	if err := s.refresh(ctx, kid); err != nil {
		return jwkset.JWK{}, err
	}
	k, err = s.Storage.KeyRead(ctx, kid)
	if errors.Is(err, jwkset.ErrKeyNotFound) {
		return jwkset.JWK{}, fmt.Errorf("%w %s: not among the issuer's keys, fetched again", ErrUnknownKey, logKid(kid))
	}
	return k, err
}

// refresh fetches the keys again for the unknown key id kid, or waits for
// the fetch that runs; within KeyRefreshEvery of the last one it refuses.
func (s *keySet) refresh(ctx context.Context, kid string) error {
	s.mu.Lock()
	if wait := s.inflight; wait != nil {
		s.mu.Unlock()
		select {
		case <-wait:
			return nil
		case <-ctx.Done():
			return fmt.Errorf("%w %s: waiting for the issuer's keys: %w", ErrUnknownKey, logKid(kid), ctx.Err())
		}
	}
	now := s.v.now()
	if !s.last.IsZero() && now.Sub(s.last) < KeyRefreshEvery {
		s.mu.Unlock()
		return fmt.Errorf("%w %s: the issuer's keys were fetched less than %v ago", ErrUnknownKey, logKid(kid), KeyRefreshEvery)
	}
	s.last = now
	done := make(chan struct{})
	s.inflight = done
	s.mu.Unlock()

	s.v.log.Info("unknown signing key id " + logKid(kid) + "; refreshing the issuer's keys")
	// The fetch is the verifier's, not the caller's: a client that goes
	// away does not fail the others waiting for it.
	fctx, cancel := context.WithTimeout(s.v.ctx, fetchTimeout)
	_, _ = s.refetch.KeyRead(fctx, kid) // a failed fetch is logged by the store
	cancel()

	s.mu.Lock()
	s.inflight = nil
	s.mu.Unlock()
	close(done)
	return nil
}

// maxLoggedKid bounds the bytes of a key id a log line or an error shows.
const maxLoggedKid = 64

// logKid is a key id as a log line shows it: printable ASCII only (any
// other byte is '?'), at most maxLoggedKid bytes, then "…".
func logKid(kid string) string {
	b := make([]byte, 0, min(len(kid), maxLoggedKid))
	for i := 0; i < len(kid) && len(b) < maxLoggedKid; i++ {
		c := kid[i]
		if c <= ' ' || c > '~' {
			c = '?'
		}
		b = append(b, c)
	}
	if len(kid) > maxLoggedKid {
		return string(b) + "…"
	}
	return string(b)
}
