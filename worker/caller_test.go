package worker

import (
	"context"
	"encoding/base64"
	"errors"
	"maps"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

func TestWithRequiredScopes(t *testing.T) {
	a := New(nil)
	noop := func(context.Context, *ToolContext) (*Result, error) { return TextResult("ok"), nil }
	a.ConfigureMcpTool("admin").WithRequiredScopes("api://app/Tools.Admin").WithRequiredScopes("Tools.Write").Handle(noop)
	a.ConfigureMcpTool("plain").Handle(noop)
	fns, err := a.Functions()
	require.NoError(t, err)
	byName := map[string]*metadata.Function{}
	for _, f := range fns {
		byName[f.Name] = f
	}
	text, ok := byName["admin"].Bindings[0].LookupString(metadata.KeyRequiredScopes)
	require.True(t, ok)
	assert.JSONEq(t, `["api://app/Tools.Admin","Tools.Write"]`, text)
	_, ok = byName["plain"].Bindings[0].LookupString(metadata.KeyRequiredScopes)
	assert.False(t, ok, "no key without scopes")

	tool, err := binding.LoadTool(byName["admin"], byName["admin"].Bindings[0], "")
	require.NoError(t, err)
	assert.Equal(t, []string{"api://app/Tools.Admin", "Tools.Write"}, tool.Trigger.RequiredScopes)

	for _, scopes := range [][]string{{"offline_access"}, {"a b"}, {""}, {"x", "x"}} {
		bad := New(nil)
		bad.ConfigureMcpTool("x").WithRequiredScopes(scopes...).Handle(noop)
		err = bad.Build()
		assert.True(t, errors.Is(err, ErrScope), "%q: %v", scopes, err)
	}

	fn := byName["admin"]
	fn.Bindings[0].SetString(metadata.KeyRequiredScopes, `{"a":1}`)
	_, err = binding.LoadTool(fn, fn.Bindings[0], "")
	assert.ErrorContains(t, err, "requiredScopes must be a string holding a JSON array")
	fn.Bindings[0].SetString(metadata.KeyRequiredScopes, `["offline_access"]`)
	_, err = binding.LoadTool(fn, fn.Bindings[0], "")
	assert.ErrorContains(t, err, "offline_access")
}

func TestCallerWithoutIdentity(t *testing.T) {
	for _, tc := range []*ToolContext{
		{},
		{Transport: &metadata.Transport{Name: metadata.TransportStreamableHTTP}},
		{Transport: &metadata.Transport{Properties: &metadata.TransportProperties{Headers: metadata.MakeHeaders(map[string]string{"Accept": "*/*"})}}},
	} {
		c, err := tc.Caller()
		assert.Nil(t, c)
		assert.ErrorIs(t, err, ErrNoCaller)
	}
	assert.Contains(t, ErrNoCaller.Error(), "FUNCMCP_AUTH_ISSUER")
	_, err := (&ResourceContext{}).Caller()
	assert.ErrorIs(t, err, ErrNoCaller)
	hs := &metadata.Transport{Properties: &metadata.TransportProperties{Headers: metadata.MakeHeaders(map[string]string{"X-Ms-Client-Principal-Id": "u-1"})}}
	c, err := (&PromptContext{Transport: hs}).Caller()
	require.NoError(t, err)
	assert.Equal(t, "u-1", c.Subject)
	assert.Equal(t, []string{}, c.Scopes)
}

func TestCallerAsAppServiceGivesIt(t *testing.T) {
	// The shape App Service authentication gives an app for an Entra ID
	// token: long claim types, header names in the case the Functions
	// host's extension copies them.
	principal := `{"auth_typ":"aad","claims":[` +
		`{"typ":"http://schemas.microsoft.com/identity/claims/objectidentifier","val":"oid-1"},` +
		`{"typ":"http://schemas.microsoft.com/identity/claims/tenantid","val":"tid-1"},` +
		`{"typ":"http://schemas.microsoft.com/identity/claims/scope","val":"user_impersonation Tools.Read"},` +
		`{"typ":"roles","val":"Admin"},` +
		`{"typ":"name","val":"Ada Lovelace"},` +
		`{"typ":"preferred_username","val":"ada@example.com"}],` +
		`"name_typ":"http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress",` +
		`"role_typ":"http://schemas.microsoft.com/ws/2008/06/identity/claims/role"}`
	hs := map[string]string{
		"x-ms-client-principal":      base64.StdEncoding.EncodeToString([]byte(principal)),
		"x-ms-client-principal-id":   "oid-1",
		"x-ms-client-principal-name": "ada@example.com",
		"x-ms-client-principal-idp":  "aad",
	}
	tc := &ToolContext{Transport: &metadata.Transport{Properties: &metadata.TransportProperties{Headers: metadata.MakeHeaders(hs)}}}
	c, err := tc.Caller()
	require.NoError(t, err)
	assert.Equal(t, "oid-1", c.Subject)
	assert.Equal(t, "ada@example.com", c.Name)
	assert.Equal(t, "aad", c.IdentityProvider)
	assert.Equal(t, "tid-1", c.TenantID)
	assert.Equal(t, []string{"user_impersonation", "Tools.Read"}, c.Scopes)
	assert.Equal(t, []string{"Admin"}, c.Roles)
	assert.True(t, c.HasScope("api://app/Tools.Read"))
	assert.True(t, c.HasScope("Admin"))
	assert.False(t, c.HasScope("api://app/Tools.Admin"))
	assert.Equal(t, "Ada Lovelace", c.Claim("name"))
	assert.Empty(t, c.AccessToken)

	hs = maps.Clone(hs)
	hs["x-ms-client-principal"] = "%%%"
	tc.Transport.Properties.Headers = metadata.MakeHeaders(hs)
	_, err = tc.Caller()
	assert.ErrorContains(t, err, "not base64")
}

func TestResourceAndPromptRequiredScopes(t *testing.T) {
	a := New(nil)
	a.ConfigureMcpResource("test://secret").WithRequiredScopes("api://app/Secrets.Read").
		Handle(func(context.Context, *ResourceContext) (*ResourceResult, error) { return nil, nil })
	a.ConfigureMcpPrompt("secret_prompt").WithRequiredScopes("api://app/Secrets.Read").
		Handle(func(context.Context, *PromptContext) (*PromptResult, error) { return nil, nil })
	fns, err := a.Functions()
	require.NoError(t, err)
	seen := 0
	for _, fn := range fns {
		for _, b := range fn.Bindings {
			switch b.Type() {
			case metadata.TypeMcpResourceTrigger:
				r, err := binding.LoadResource(fn, b, "")
				require.NoError(t, err)
				assert.Equal(t, []string{"api://app/Secrets.Read"}, r.RequiredScopes)
				seen++
			case metadata.TypeMcpPromptTrigger:
				p, err := binding.LoadPrompt(fn, b, "")
				require.NoError(t, err)
				assert.Equal(t, []string{"api://app/Secrets.Read"}, p.RequiredScopes)
				seen++
			}
		}
	}
	assert.Equal(t, 2, seen)
	bad := New(nil)
	bad.ConfigureMcpPrompt("p").WithRequiredScopes("offline_access").
		Handle(func(context.Context, *PromptContext) (*PromptResult, error) { return nil, nil })
	assert.ErrorIs(t, bad.Build(), ErrScope)
}
