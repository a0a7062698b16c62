package oauth

import (
	"strings"
	"testing"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// FuzzTokenAndHeaders feeds the Authorization header parser, the token
// validator (against a fixed key set: nothing but a token signed by its key
// for the right issuer and audience may pass), and the challenge quoting arbitrary input.
func FuzzTokenAndHeaders(f *testing.F) {
	op := testutil.StartOIDC(f)
	cfg := &Config{Issuer: op.URL, Audiences: []string{testAudience}}
	valid := op.Token(f, testutil.Claims(op.URL, testAudience, "user-1", "Tools.Read"))
	f.Add("Bearer "+valid, `{"method":"tools/call","params":{"name":"admin"}}`)
	f.Add("bearer a.b.c", `[{"method":"resources/read","params":{"uri":"x://y"}}]`)
	f.Add("Bearer "+strings.Repeat("A", 100)+"..", `{"method":`)
	f.Add(`Bearer eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.`, "\"\\\r\n")
	kf, err := keyfunc.NewJWKSetJSON(op.JWKS())
	if err != nil {
		f.Fatal(err)
	}
	v := NewVerifier(f.Context(), cfg, nil)
	v.keys = kf
	f.Fuzz(func(t *testing.T, header, body string) {
		token, err := BearerToken([]string{header})
		if err == nil {
			if token == "" || len(token) > MaxTokenBytes {
				t.Fatalf("BearerToken(%q) = %q", header, token)
			}
			id, err := v.Verify(t.Context(), token)
			if err == nil {
				// Only a token the provider signed can pass; its claims
				// must be the ones checked.
				p, _, perr := jwt.NewParser().ParseUnverified(token, jwt.MapClaims{})
				if perr != nil || p.Method.Alg() == "none" || strings.HasPrefix(p.Method.Alg(), "HS") {
					t.Fatalf("accepted a token with alg %v", p)
				}
				if id.Issuer != op.URL {
					t.Fatalf("accepted issuer %q", id.Issuer)
				}
			}
		}
		q := quote(body)
		if strings.ContainsAny(q, "\r\n\x00") || len(q) < 2 || q[0] != '"' || q[len(q)-1] != '"' {
			t.Fatalf("quote(%q) = %q", body, q)
		}
	})
}
