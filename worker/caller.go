package worker

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/funcmcp/funcmcp/metadata"
)

// WithRequiredScopes names OAuth scopes a caller's access token must grant
// to call the tool, beyond what the whole app asks for (for example
// "api://<app id>/Tools.Admin"; an Entra ID token's short scope name
// "Tools.Admin" or an application role of that name grants it). funchost,
// as an OAuth resource server (FUNCMCP_AUTH_ISSUER), answers a call whose
// token lacks one 403 insufficient_scope naming the scopes to ask for, and
// lists them in its protected resource metadata; without
// FUNCMCP_AUTH_ISSUER it refuses every call of the tool, since it
// authenticates no caller. The worker checks them too, before the
// handler, from the caller's identity headers (see [ToolContext.Caller]),
// so the promise holds under the Azure Functions host, which ignores the
// funcmcp key: a call whose caller lacks a scope, or that has no caller,
// gets an isError result (a [*ScopeError]) and the handler does not run.
// offline_access is refused. Calls add up.
func (b *ToolBuilder) WithRequiredScopes(scopes ...string) *ToolBuilder {
	b.scopes, b.errs = addScopes(b.scopes, b.errs, scopes)
	return b
}

// addScopes adds scopes to those a builder holds when together they pass
// metadata.CheckScopes; otherwise it keeps them and adds the error.
func addScopes(held []string, errs []error, scopes []string) ([]string, []error) {
	all := append(slices.Clone(held), scopes...)
	if err := metadata.CheckScopes(all); err != nil {
		return held, append(errs, ruleErr(ErrScope, "%v", err))
	}
	return all, errs
}

// Headers of the caller's identity, as App Service authentication (Easy
// Auth) gives them to an app, and as funchost does when it validates
// access tokens.
const (
	HeaderClientPrincipal     = "X-MS-CLIENT-PRINCIPAL"
	HeaderClientPrincipalID   = "X-MS-CLIENT-PRINCIPAL-ID"
	HeaderClientPrincipalName = "X-MS-CLIENT-PRINCIPAL-NAME"
	HeaderClientPrincipalIDP  = "X-MS-CLIENT-PRINCIPAL-IDP"
	HeaderAccessToken         = "X-MS-TOKEN-AAD-ACCESS-TOKEN"
)

// ErrNoCaller is returned by [ToolContext.Caller] when the host gave no
// caller identity: the app is not behind authorization (funchost without
// FUNCMCP_AUTH_ISSUER, the Azure host without App Service authentication),
// so nothing is known of who calls.
var ErrNoCaller = errors.New("no caller identity: the host authenticates no caller (set FUNCMCP_AUTH_ISSUER under funchost; enable App Service authentication under the Azure Functions host)")

// Claim is one claim of the caller's token.
type Claim struct {
	Type  string `json:"typ"`
	Value string `json:"val"`
}

// Caller is who calls a tool, as the host's authentication says.
type Caller struct {
	// Subject identifies the caller: the Entra ID object id, else the
	// token's subject (X-MS-CLIENT-PRINCIPAL-ID).
	Subject string `json:"subject"`
	// Name is the caller's user name (X-MS-CLIENT-PRINCIPAL-NAME), else
	// their display name.
	Name string `json:"name,omitempty"`
	// IdentityProvider is "aad" for Entra ID, else the provider's name.
	IdentityProvider string `json:"identityProvider,omitempty"`
	// TenantID is the Entra ID tenant ("" elsewhere).
	TenantID string `json:"tenantId,omitempty"`
	// Scopes are the delegated scopes (scp), Roles the roles.
	Scopes []string `json:"scopes"`
	Roles  []string `json:"roles,omitempty"`
	// Claims are every claim the host passed (X-MS-CLIENT-PRINCIPAL).
	Claims []Claim `json:"-"`
	// AccessToken is the caller's access token, only when the app opted in
	// (funchost: FUNCMCP_AUTH_PASS_TOKEN; App Service: the token store),
	// for on-behalf-of calls to downstream APIs. Never log it.
	AccessToken string `json:"-"`
}

// Claim returns the first value of claim typ ("" when absent). The long
// claim-type URIs App Service uses for scp, tid, oid, roles and sub are
// read as those short names.
func (c *Caller) Claim(typ string) string {
	for _, cl := range c.Claims {
		if cl.Type == typ {
			return cl.Value
		}
	}
	return ""
}

// HasScope reports whether the caller's token grants scope, as a
// delegated scope or a role (by its name or its last path segment, as
// Entra ID puts "Tools.Admin" in scp for "api://<app>/Tools.Admin").
func (c *Caller) HasScope(scope string) bool {
	short := scope
	if i := strings.LastIndexByte(scope, '/'); i >= 0 && strings.Contains(scope, "://") {
		short = scope[i+1:]
	}
	return slices.Contains(c.Scopes, scope) || slices.Contains(c.Scopes, short) ||
		slices.Contains(c.Roles, scope) || slices.Contains(c.Roles, short)
}

// Claim types App Service uses for claims that have short names in tokens.
var longClaimTypes = map[string]string{
	"http://schemas.microsoft.com/identity/claims/scope":                   "scp",
	"http://schemas.microsoft.com/identity/claims/tenantid":                "tid",
	"http://schemas.microsoft.com/identity/claims/objectidentifier":        "oid",
	"http://schemas.microsoft.com/ws/2008/06/identity/claims/role":         "roles",
	"http://schemas.xmlsoap.org/ws/2005/05/identity/claims/nameidentifier": "sub",
}

// Caller returns who calls the tool, from the identity headers the host
// passes in the invocation's transport headers (funchost when it validates
// tokens; the Azure Functions MCP extension copies them from App Service
// authentication). It returns ErrNoCaller when there are none. Under the
// Azure host, only App Service authentication removes such headers from
// what clients send: without it they are the client's word.
func (tc *ToolContext) Caller() (*Caller, error) { return callerOf(tc.Transport) }

// Caller returns who reads the resource: see [ToolContext.Caller].
func (rc *ResourceContext) Caller() (*Caller, error) { return callerOf(rc.Transport) }

// Caller returns who gets the prompt: see [ToolContext.Caller].
func (pc *PromptContext) Caller() (*Caller, error) { return callerOf(pc.Transport) }

func callerOf(t *metadata.Transport) (*Caller, error) {
	header := func(name string) string {
		v, _ := t.Header(name) // names matched case-insensitively
		return v
	}
	id := header(HeaderClientPrincipalID)
	raw := header(HeaderClientPrincipal)
	if id == "" && raw == "" {
		return nil, ErrNoCaller
	}
	c := &Caller{
		Subject:          id,
		Name:             header(HeaderClientPrincipalName),
		IdentityProvider: header(HeaderClientPrincipalIDP),
		AccessToken:      header(HeaderAccessToken),
	}
	if raw != "" {
		data, err := base64.StdEncoding.DecodeString(raw)
		if err != nil {
			return nil, errors.New("reading the caller identity: " + HeaderClientPrincipal + " is not base64")
		}
		var p struct {
			AuthType string  `json:"auth_typ"`
			Claims   []Claim `json:"claims"`
			NameType string  `json:"name_typ"`
			RoleType string  `json:"role_typ"`
		}
		if err := json.Unmarshal(data, &p); err != nil {
			return nil, errors.New("reading the caller identity: " + HeaderClientPrincipal + " is not the principal JSON")
		}
		if c.IdentityProvider == "" {
			c.IdentityProvider = p.AuthType
		}
		for _, cl := range p.Claims {
			typ := cl.Type
			if short, ok := longClaimTypes[typ]; ok {
				typ = short
			}
			c.Claims = append(c.Claims, Claim{Type: typ, Value: cl.Value})
			switch {
			case typ == "scp" || typ == "scope":
				c.Scopes = append(c.Scopes, strings.Fields(cl.Value)...)
			case typ == "roles" || typ == p.RoleType && p.RoleType != "":
				c.Roles = append(c.Roles, cl.Value)
			case typ == "tid":
				c.TenantID = cl.Value
			case typ == p.NameType && c.Name == "":
				c.Name = cl.Value
			}
		}
		if c.Subject == "" {
			c.Subject = c.Claim("oid")
			if c.Subject == "" {
				c.Subject = c.Claim("sub")
			}
		}
		if c.Name == "" {
			c.Name = c.Claim("name")
		}
	}
	if c.Scopes == nil {
		c.Scopes = []string{}
	}
	return c, nil
}

// ScopeError refuses a request for a tool, resource or prompt that requires
// scopes the caller does not have: Missing are those of Required the
// caller's identity does not grant (every one when there is no caller).
type ScopeError struct {
	// What names what was asked for ("tool 'x'", "prompt 'p'", ...).
	What     string
	Required []string
	Missing  []string
	// NoCaller: the host passed no identity (it authenticates no caller),
	// or one that could not be read.
	NoCaller bool
}

func (e *ScopeError) Error() string {
	if e.NoCaller {
		return fmt.Sprintf("forbidden: %s requires the scope %s, and the host authenticates no caller "+
			"(set FUNCMCP_AUTH_ISSUER under funchost; enable App Service authentication under the Azure Functions host)",
			e.What, strings.Join(e.Required, " "))
	}
	return fmt.Sprintf("forbidden: the caller's access token lacks a scope %s requires: %s", e.What, strings.Join(e.Missing, " "))
}

// checkScopes returns a *ScopeError when the caller of the request t
// carries lacks a scope of required, or there is no caller; nil when
// required is empty or every scope is granted (as [Caller.HasScope] says,
// which is what funchost's check grants).
func checkScopes(what string, required []string, t *metadata.Transport) *ScopeError {
	if len(required) == 0 {
		return nil
	}
	c, err := callerOf(t)
	if err != nil { // none, or one that cannot be read: nothing is granted
		return &ScopeError{What: what, Required: required, Missing: required, NoCaller: true}
	}
	var missing []string
	for _, s := range required {
		if !c.HasScope(s) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return &ScopeError{What: what, Required: required, Missing: missing}
	}
	return nil
}

// scopeFailure is the failure reply of a resource or prompt request
// refused by checkScopes: -32600, as funchost refuses it, with the
// required scopes in data.
func scopeFailure(se *ScopeError) *metadata.FailureReply {
	data, _ := metadata.Marshal(struct {
		RequiredScopes []string `json:"requiredScopes"`
	}{se.Required})
	return &metadata.FailureReply{Error: se.Error(), Code: metadata.CodeInvalidRequest, Data: data}
}
