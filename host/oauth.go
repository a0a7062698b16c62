package host

import (
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/host/internal/oauth"
	"github.com/funcmcp/funcmcp/host/internal/telemetry"
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
	o := oauth.Options{Endpoint: MCPPath, Logger: h.log, Declared: declared}
	g := oauth.NewGuard(cfg, oauth.NewVerifier(ctx, cfg, nil).WithLogger(h.log), o)
	h.log.Info("MCP endpoints ask for OAuth access tokens", "issuer", cfg.Issuer, "audiences", cfg.Audiences,
		"scopes", g.ScopesSupported(), "passToken", cfg.PassToken)
	return &resourceServer{guard: g, stop: stop}, nil
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

// scopes returns the link of the MCP chain that checks, once per request,
// the scopes what it names requires (the tool, the prompt, the resource
// or the template its URI matches, as the endpoint resolved it:
// mcp.Target.RequiredScopes) against the request's token; none when no
// entry of the app requires any.
//
// With access tokens on, a token that lacks one is refused with 403
// insufficient_scope and the challenge that asks for it (step-up). It
// fails closed: when the host takes no tokens (FUNCMCP_AUTH_ISSUER not
// set), or the request carries no validated identity, nothing can grant a
// scope and the request is refused with a -32600 error that names the
// scopes and says why. Over legacy SSE, whose messages have no status of
// their own, the refusal is its JSON-RPC error on the stream.
func (h *Host) scopes() []mcp.Middleware {
	if len(h.cat.DeclaredScopes()) == 0 {
		return nil
	}
	return []mcp.Middleware{func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(x *mcp.Exchange) {
			if x.Refused() || x.Stream() != "" {
				next(x)
				return
			}
			t := x.Target()
			required := t.RequiredScopes()
			if len(required) == 0 {
				next(x)
				return
			}
			r := x.Request()
			id, _ := x.Caller().Identity().(*oauth.Identity)
			data := ScopesRequiredData{RequiredScopes: required}
			var msg string
			switch {
			case h.oauth == nil:
				msg = fmt.Sprintf("Forbidden: %s requires the scope %s, and this server authenticates no caller (set %s to enable OAuth access tokens).",
					t.Resolved.What, strings.Join(required, " "), SettingAuthIssuer)
			case id == nil:
				msg = fmt.Sprintf("Forbidden: %s requires the scope %s, and the request carries no validated access token.", t.Resolved.What, strings.Join(required, " "))
			default:
				missing := id.Missing(required)
				if len(missing) == 0 {
					next(x)
					return
				}
				x.Refuse(http.StatusForbidden, h.oauth.guard.InsufficientScope(r, id, missing), mcp.CodeInvalidRequest,
					"Forbidden: the access token lacks a scope this request needs: "+strings.Join(missing, " "), data)
				return
			}
			h.tel.Refused(r.Context(), telemetry.RefusedForbidden) // answered 200 with a JSON-RPC error: counted here
			x.FailWith(&mcp.ProtocolError{Code: mcp.CodeInvalidRequest, Message: msg, Data: data})
		}
	}}
}

// warnUnguarded logs, at start, each tool, resource, resource template
// and prompt that requires scopes when the host takes no access tokens:
// every request for one is refused (see scopes).
func (h *Host) warnUnguarded() {
	if h.oauth != nil {
		return
	}
	for _, e := range h.cat.ScopedEntries() {
		h.log.Warn(e.Kind+" requires scopes but "+SettingAuthIssuer+" is not set: this server authenticates no caller, so every request for it is refused",
			"function", e.Function, e.Kind, e.Name, "scopes", strings.Join(e.Scopes, " "))
	}
}
