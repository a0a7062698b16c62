package host

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/host/internal/oauth"
	"github.com/funcmcp/funcmcp/host/internal/telemetry"
	"github.com/funcmcp/funcmcp/metadata"
)

// App settings that make funchost an OAuth 2.1 resource server (see
// docs/security.md and docs/configuration.md).
const (
	SettingAuthIssuer         = oauth.SettingIssuer
	SettingAuthAudience       = oauth.SettingAudience
	SettingAuthScopes         = oauth.SettingScopes
	SettingAuthResource       = oauth.SettingResource
	SettingAuthTrustForwarded = oauth.SettingTrustForwarded
	SettingAuthTenants        = oauth.SettingTenants
	SettingAuthPassToken      = oauth.SettingPassToken
)

// MetadataPath is where the protected resource metadata is served (at
// the root, and followed by each MCP endpoint's path) when the host asks
// for access tokens.
const MetadataPath = oauth.MetadataPath

// resourceServer is the host's OAuth side: nil when FUNCMCP_AUTH_ISSUER is
// not set.
type resourceServer struct {
	guard *oauth.Guard
	stop  context.CancelFunc // ends the key refresh
}

// newResourceServer reads the authorization settings and builds the
// guard; nil when the host asks for no tokens.
func (h *Host) newResourceServer() (*resourceServer, error) {
	cfg, err := oauth.Load(h.cfg.Lookup)
	if err != nil || cfg == nil {
		return nil, err
	}
	declared := h.cat.DeclaredScopes()
	ctx, stop := context.WithCancel(context.Background())
	o := oauth.Options{Endpoint: MCPPath, Logger: h.log, Declared: declared, MaxBodyBytes: mcp.DefaultMaxBodyBytes}
	if len(declared) > 0 {
		// Bodies are read for the tool name only when a tool needs a scope,
		// and scanned only when they may name one that does.
		o.Required = h.requiredScopes
		o.Scoped = oauth.NewScoped(h.cat.Scoped())
	}
	g := oauth.NewGuard(cfg, oauth.NewVerifier(ctx, cfg, nil).WithLogger(h.log), o)
	h.log.Info("MCP endpoints ask for OAuth access tokens", "issuer", cfg.Issuer, "audiences", cfg.Audiences,
		"scopes", g.ScopesSupported(), "passToken", cfg.PassToken)
	return &resourceServer{guard: g, stop: stop}, nil
}

// requiredScopes returns the scopes an operation needs: the requiredScopes
// of the tool, resource (or the template its URI matches) or prompt.
func (h *Host) requiredScopes(op oauth.Operation) []string {
	m := metadata.LookupMethod(op.Method)
	if m == nil || !m.Scoped {
		return nil
	}
	switch m.Target {
	case metadata.TargetTool:
		if t := h.cat.Lookup(op.Name); t != nil {
			return t.Binding.Trigger.RequiredScopes
		}
	case metadata.TargetResource:
		if r, _, ok := h.cat.LookupResource(op.Name); ok {
			return r.RequiredScopes
		}
	case metadata.TargetPrompt:
		if p, ok := h.cat.Prompt(op.Name); ok {
			return p.RequiredScopes
		}
	}
	return nil
}

// protect puts next behind the access token check when the host asks for
// tokens.
func (h *Host) protect(next http.Handler) http.Handler {
	if h.oauth == nil {
		return next
	}
	return h.oauth.guard.Protect(next)
}

// ScopesRequiredData is the data of the JSON-RPC error that refuses a
// request for what requires scopes: the scopes it requires.
type ScopesRequiredData struct {
	RequiredScopes []string `json:"requiredScopes"`
}

// lacksScopes is the check behind the HTTP one, on the tools/call,
// resources/read and prompts/get paths: a request whose token does not
// grant a scope the tool, resource or prompt (what, named for the
// message) needs is refused. It fails closed: when the host takes no
// tokens (FUNCMCP_AUTH_ISSUER not set), or the request carries no
// validated identity, nothing can grant a scope and the request is
// refused too, with an error that names the scopes and says why.
func (h *Host) lacksScopes(ctx context.Context, what string, required []string) error {
	if len(required) == 0 {
		return nil
	}
	id := oauth.IdentityFrom(ctx)
	var msg string
	switch {
	case h.oauth == nil:
		msg = fmt.Sprintf("Forbidden: %s requires the scope %s, and this server authenticates no caller (set %s to enable OAuth access tokens).",
			what, strings.Join(required, " "), SettingAuthIssuer)
	case id == nil:
		msg = fmt.Sprintf("Forbidden: %s requires the scope %s, and the request carries no validated access token.", what, strings.Join(required, " "))
	case len(id.Missing(required)) > 0:
		msg = "Forbidden: the access token lacks a scope this request needs."
	default:
		return nil
	}
	h.tel.Refused(ctx, telemetry.RefusedForbidden) // answered 200 with a JSON-RPC error: counted here
	return &mcp.ProtocolError{Code: mcp.CodeInvalidRequest, Message: msg, Data: ScopesRequiredData{RequiredScopes: required}}
}

// warnUnguarded logs, at start, each tool, resource, resource template
// and prompt that requires scopes when the host takes no access tokens:
// every request for one is refused (see lacksScopes).
func (h *Host) warnUnguarded() {
	if h.oauth != nil {
		return
	}
	for _, e := range h.cat.ScopedEntries() {
		h.log.Warn(e.Kind+" requires scopes but "+SettingAuthIssuer+" is not set: this server authenticates no caller, so every request for it is refused",
			"function", e.Function, e.Kind, e.Name, "scopes", strings.Join(e.Scopes, " "))
	}
}
