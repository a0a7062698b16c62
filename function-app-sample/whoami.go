package main

import (
	"context"
	"errors"
	"os"

	"github.com/funcmcp/funcmcp/worker"
)

// WhoamiInput is whoami's (empty) arguments.
type WhoamiInput struct{}

// Whoami is who calls, as the host's authentication says.
type Whoami struct {
	// Authenticated is false when the host authenticates no caller
	// (funchost without FUNCMCP_AUTH_ISSUER, the Azure host without App
	// Service authentication); the other fields are then empty.
	Authenticated    bool     `json:"authenticated"`
	Subject          string   `json:"subject" jsonschema:"The caller's id: the Entra ID object id, else the token's subject."`
	Name             string   `json:"name" jsonschema:"The caller's user name or display name."`
	IdentityProvider string   `json:"identity_provider,omitempty"`
	TenantID         string   `json:"tenant_id,omitempty"`
	Scopes           []string `json:"scopes" jsonschema:"The delegated scopes the caller's token grants."`
	Roles            []string `json:"roles,omitempty"`
}

// CallerClaims is every claim of the caller's token.
type CallerClaims struct {
	Authenticated bool           `json:"authenticated"`
	Claims        []worker.Claim `json:"claims"`
}

// claimsScope is the scope caller_claims needs: SAMPLE_CLAIMS_SCOPE when the
// app is built (with Entra ID, "api://<application id>/Claims.Read"), else
// Claims.Read.
func claimsScope() string {
	if s := os.Getenv("SAMPLE_CLAIMS_SCOPE"); s != "" {
		return s
	}
	return "Claims.Read"
}

func registerWhoami(app *worker.App) {
	//docs:begin whoami
	worker.AddTool(app, "whoami", func(_ context.Context, tc *worker.ToolContext, _ WhoamiInput) (*worker.Result, Whoami, error) {
		c, err := tc.Caller()
		if errors.Is(err, worker.ErrNoCaller) {
			return worker.TextResult("No caller identity: " + err.Error()), Whoami{Scopes: []string{}}, nil
		}
		if err != nil {
			return nil, Whoami{}, err
		}
		return nil, Whoami{Authenticated: true, Subject: c.Subject, Name: c.Name, IdentityProvider: c.IdentityProvider,
			TenantID: c.TenantID, Scopes: c.Scopes, Roles: c.Roles}, nil
	}).
		WithTitle("Who am I").
		WithDescription("Tell who calls: the subject, name and scopes of the caller's access token, " +
			"as the host's authentication gives them (nothing when the server authenticates no caller).")
	//docs:end whoami

	// Every claim of the token is more than most callers should see: the
	// tool needs a scope of its own, which funchost asks for (403 and
	// step-up) when the token lacks it.
	worker.AddTool(app, "caller_claims", func(_ context.Context, tc *worker.ToolContext, _ WhoamiInput) (*worker.Result, CallerClaims, error) {
		c, err := tc.Caller()
		if errors.Is(err, worker.ErrNoCaller) {
			return worker.TextResult("No caller identity: " + err.Error()), CallerClaims{Claims: []worker.Claim{}}, nil
		}
		if err != nil {
			return nil, CallerClaims{}, err
		}
		return nil, CallerClaims{Authenticated: true, Claims: c.Claims}, nil
	}).
		//docs:begin scope
		WithRequiredScopes(claimsScope()).
		//docs:end scope
		WithTitle("Caller's claims").
		WithDescription("List every claim of the caller's access token. Needs the " + claimsScope() + " scope.")
}
