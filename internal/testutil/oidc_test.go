package testutil

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// TestOIDCAuthorizationCode checks the provider's authorization code flow
// and that it refuses what an authorization server must: an unknown
// redirect URI, a request without S256 PKCE, a wrong verifier, a code used
// twice or by another client.
func TestOIDCAuthorizationCode(t *testing.T) {
	op := StartOIDC(t)
	const client, redirect = "client-1", "http://127.0.0.1/cb"
	op.RegisterClient(client, redirect)
	op.SignIn("alice")
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	verifier := strings.Repeat("v", 50)
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	authorize := func(edit func(url.Values)) *http.Response {
		t.Helper()
		q := url.Values{"response_type": {"code"}, "client_id": {client}, "redirect_uri": {redirect}, "state": {"s1"},
			"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "scope": {"api://app/Read"}, "resource": {"http://127.0.0.1:9/mcp"}}
		if edit != nil {
			edit(q)
		}
		resp, err := noFollow.Get(op.URL + "/authorize?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp
	}
	codeOf := func(resp *http.Response) url.Values {
		t.Helper()
		if resp.StatusCode != http.StatusFound {
			t.Fatalf("authorize: %d", resp.StatusCode)
		}
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || !strings.HasPrefix(loc.String(), redirect+"?") {
			t.Fatalf("redirect to %q", resp.Header.Get("Location"))
		}
		return loc.Query()
	}
	exchange := func(code, verifier, clientID string) (int, map[string]any) {
		t.Helper()
		resp, err := http.PostForm(op.URL+"/token", url.Values{"grant_type": {"authorization_code"}, "code": {code},
			"redirect_uri": {redirect}, "client_id": {clientID}, "code_verifier": {verifier}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		return resp.StatusCode, body
	}

	if resp := authorize(func(q url.Values) { q.Set("redirect_uri", "http://127.0.0.1/evil") }); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("an unregistered redirect URI: %d, want 400 without a redirect", resp.StatusCode)
	}
	if q := codeOf(authorize(func(q url.Values) { q.Set("code_challenge_method", "plain"); q.Set("code_challenge", verifier) })); q.Get("error") != "invalid_request" || q.Get("code") != "" {
		t.Errorf("plain PKCE: %v", q)
	}

	q := codeOf(authorize(nil))
	if q.Get("state") != "s1" || q.Get("iss") != op.URL || q.Get("code") == "" {
		t.Fatalf("approval: %v", q)
	}
	if status, body := exchange(q.Get("code"), strings.Repeat("w", 50), client); status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Errorf("a wrong verifier: %d %v", status, body)
	}
	if status, _ := exchange(q.Get("code"), verifier, client); status != http.StatusBadRequest {
		t.Errorf("a code tried once opens no more: %d", status)
	}
	q = codeOf(authorize(nil))
	if status, body := exchange(q.Get("code"), verifier, "client-2"); status != http.StatusBadRequest || body["error"] != "invalid_grant" {
		t.Errorf("another client: %d %v", status, body)
	}
	q = codeOf(authorize(nil))
	status, body := exchange(q.Get("code"), verifier, client)
	if status != http.StatusOK || body["token_type"] != "Bearer" {
		t.Fatalf("exchange: %d %v", status, body)
	}
	tok, _, err := jwt.NewParser().ParseUnverified(body["access_token"].(string), jwt.MapClaims{})
	if err != nil {
		t.Fatal(err)
	}
	c := tok.Claims.(jwt.MapClaims)
	if c["sub"] != "alice" || c["aud"] != "http://127.0.0.1:9/mcp" || c["scp"] != "Read" || c["iss"] != op.URL || c["azp"] != client {
		t.Errorf("claims %v", c)
	}
	if got := op.AuthorizationRequests(); len(got) != 3 || got[0].Resource != "http://127.0.0.1:9/mcp" {
		t.Errorf("requests %+v", got)
	}
}
