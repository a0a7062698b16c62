package testutil

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// IdentityEndpoint stands in for the managed identity endpoint App Service
// (and so Azure Functions) gives a process through IDENTITY_ENDPOINT and
// IDENTITY_HEADER: azidentity's ManagedIdentityCredential asks it for
// tokens. It serves the tokens the test chooses and records the requests.
type IdentityEndpoint struct {
	URL, Header string
	token       func(resource string) string
	mu          sync.Mutex
	requests    []IdentityRequest
}

// IdentityRequest is one token request.
type IdentityRequest struct {
	Resource, ClientID string
	// HeaderOK: the request carried the secret header.
	HeaderOK bool
}

// StartIdentityEndpoint serves tokens made by token(resource) on a
// loopback port until the test ends.
func StartIdentityEndpoint(t testing.TB, token func(resource string) string) *IdentityEndpoint {
	t.Helper()
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	e := &IdentityEndpoint{Header: hex.EncodeToString(secret), token: token}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		req := IdentityRequest{Resource: q.Get("resource"), ClientID: q.Get("client_id"), HeaderOK: r.Header.Get("X-Identity-Header") == e.Header}
		e.mu.Lock()
		e.requests = append(e.requests, req)
		e.mu.Unlock()
		if !req.HeaderOK {
			http.Error(w, "missing X-IDENTITY-HEADER", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{
			"access_token": e.token(req.Resource),
			"expires_on":   strconv.FormatInt(time.Now().Add(time.Hour).Unix(), 10),
			"resource":     req.Resource,
			"token_type":   "Bearer",
			"client_id":    req.ClientID,
		})
	}))
	t.Cleanup(srv.Close)
	e.URL = srv.URL + "/msi/token"
	return e
}

// Env is the environment that points a process's managed identity here.
func (e *IdentityEndpoint) Env() []string {
	return []string{"IDENTITY_ENDPOINT=" + e.URL, "IDENTITY_HEADER=" + e.Header}
}

// Requests returns the token requests so far.
func (e *IdentityEndpoint) Requests() []IdentityRequest {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]IdentityRequest(nil), e.requests...)
}

// EntraJWT returns an unsigned token shaped as Microsoft Entra issues one
// for audience aud, valid for an hour: what Azurite's basic OAuth check
// reads (audience, issuer, lifetime; not the signature).
func EntraJWT(aud string) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	now := time.Now()
	tenant := "72f988bf-86f1-41af-91ab-2d7cd011db47"
	return enc(map[string]string{"alg": "RS256", "typ": "JWT"}) + "." + enc(map[string]any{
		"aud": aud, "iss": fmt.Sprintf("https://sts.windows.net/%s/", tenant), "tid": tenant,
		"iat": now.Add(-time.Minute).Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(),
		"oid": "00000000-0000-0000-0000-000000000001",
	}) + "." + base64.RawURLEncoding.EncodeToString([]byte("unsigned"))
}
