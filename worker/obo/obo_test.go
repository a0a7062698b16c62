package obo

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/worker"
)

const (
	appID      = "mcp-app"
	appSecret  = "app-secret"
	tenant     = "tenant-1"
	downstream = "https://downstream.example"
)

// options points azidentity at the test provider: its authority host
// (through the cloud configuration), a transport that trusts its
// certificate, and no instance discovery (which would ask Microsoft).
func options(op *testutil.OIDC, pool *x509.CertPool, secret string) *Options {
	return &Options{ClientID: appID, ClientSecret: secret, Credential: &azidentity.OnBehalfOfCredentialOptions{
		ClientOptions: azcore.ClientOptions{
			Cloud:     cloud.Configuration{ActiveDirectoryAuthorityHost: op.URL + "/"},
			Transport: &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}},
		},
		DisableInstanceDiscovery: true,
	}}
}

// TestCredentialExchangesTheCallersToken runs azidentity's on-behalf-of
// credential against the test provider as the token endpoint: the
// caller's token (issued to the app) is exchanged, with the app's secret,
// for a token of the downstream API with the caller's subject; a second
// GetToken is served from the cache.
func TestCredentialExchangesTheCallersToken(t *testing.T) {
	op, pool := testutil.StartOIDCTLS(t)
	op.RegisterConfidentialClient(appID, appSecret)
	claims := testutil.Claims(op.TenantIssuer(tenant), "api://"+appID, "alice", "user_impersonation")
	claims["tid"] = tenant
	caller := &worker.Caller{Subject: "alice", TenantID: tenant, AccessToken: op.Token(t, claims)}

	cred, err := NewCredential(caller, options(op, pool, appSecret))
	require.NoError(t, err)
	for range 2 {
		tok, err := cred.GetToken(t.Context(), policy.TokenRequestOptions{Scopes: []string{downstream + "/.default"}})
		require.NoError(t, err)
		got, _, err := jwt.NewParser().ParseUnverified(tok.Token, jwt.MapClaims{})
		require.NoError(t, err)
		c := got.Claims.(jwt.MapClaims)
		assert.Equal(t, "alice", c["sub"])
		assert.Equal(t, downstream, c["aud"])
		assert.Equal(t, appID, c["azp"])
	}
	reqs := op.OnBehalfOfRequests()
	require.Len(t, reqs, 1, "the second token comes from the cache")
	assert.Equal(t, "alice", reqs[0].Subject)
	assert.Contains(t, reqs[0].Scope, downstream+"/.default")

	// The app's secret is checked.
	cred, err = NewCredential(caller, options(op, pool, "wrong"))
	require.NoError(t, err)
	_, err = cred.GetToken(t.Context(), policy.TokenRequestOptions{Scopes: []string{downstream + "/.default"}})
	require.Error(t, err)
	assert.Len(t, op.OnBehalfOfRequests(), 1)
}

func TestNewCredentialRefuses(t *testing.T) {
	withToken := &worker.Caller{Subject: "alice", AccessToken: "a.b.c"}
	_, err := NewCredential(&worker.Caller{Subject: "alice"}, &Options{ClientID: appID, TenantID: tenant, ClientSecret: "s"})
	assert.ErrorIs(t, err, ErrNoAccessToken, "the app did not opt in to the token")
	_, err = NewCredential(nil, &Options{ClientID: appID, TenantID: tenant, ClientSecret: "s"})
	assert.ErrorIs(t, err, ErrNoAccessToken)
	for name, o := range map[string]*Options{
		"no options":          nil,
		"no client id":        {TenantID: tenant, ClientSecret: "s"},
		"no tenant anywhere":  {ClientID: appID, ClientSecret: "s"},
		"no app credential":   {ClientID: appID, TenantID: tenant},
		"two app credentials": {ClientID: appID, TenantID: tenant, ClientSecret: "s", ClientAssertion: func(context.Context) (string, error) { return "", nil }},
	} {
		_, err := NewCredential(withToken, o)
		var oe *OptionsError
		assert.True(t, errors.As(err, &oe), "%s: %v", name, err)
	}
}
