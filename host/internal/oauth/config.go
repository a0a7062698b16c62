package oauth

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// App settings (the environment, else local.settings.json Values) that turn
// funchost into an OAuth 2.1 resource server.
const (
	// SettingIssuer is the issuer URL of the authorization server (https;
	// http only for a loopback host). It may hold the literal {tenantid}
	// (Microsoft Entra ID multi-tenant issuers); then SettingTenants lists
	// the tenants accepted. Unset: no token is asked for.
	SettingIssuer = "FUNCMCP_AUTH_ISSUER"
	// SettingAudience holds the accepted audiences, comma-separated; a
	// token's aud must hold one of them (RFC 8707). Default: the
	// SettingResource value.
	SettingAudience = "FUNCMCP_AUTH_AUDIENCE"
	// SettingScopes holds the scopes advertised in the protected resource
	// metadata and asked for in a 401 challenge, comma-separated: the
	// setting App Service's built-in MCP authorization reads.
	SettingScopes = "WEBSITE_AUTH_PRM_DEFAULT_WITH_SCOPES"
	// SettingResource is the resource identifier in the metadata. Default:
	// the public URL of the MCP endpoint.
	SettingResource = "FUNCMCP_AUTH_RESOURCE"
	// SettingTrustForwarded ("true") takes the public URL's scheme and host
	// from X-Forwarded-Proto and X-Forwarded-Host, for a host behind a
	// proxy that sets them (and strips what clients send).
	SettingTrustForwarded = "FUNCMCP_AUTH_TRUST_FORWARDED"
	// SettingTenants holds the tenant ids accepted under a {tenantid}
	// issuer, comma-separated (required with such an issuer).
	SettingTenants = "FUNCMCP_AUTH_TENANTS"
	// SettingPassToken ("true") gives the worker the caller's access token
	// in X-MS-TOKEN-AAD-ACCESS-TOKEN, as App Service's token store does,
	// for on-behalf-of calls to downstream APIs. Off by default.
	SettingPassToken = "FUNCMCP_AUTH_PASS_TOKEN"
)

// TenantPlaceholder stands for the token's tid in a multi-tenant issuer.
const TenantPlaceholder = "{tenantid}"

// OfflineAccess is the scope never advertised nor asked for (MCP
// 2026-07-28: a resource server does not ask for refresh tokens).
const OfflineAccess = "offline_access"

// Config is the resource server configuration.
type Config struct {
	// Issuer is the issuer URL, possibly holding TenantPlaceholder.
	Issuer string
	// Audiences are the accepted audiences (never empty).
	Audiences []string
	// Scopes are the default scopes: advertised and asked for.
	Scopes []string
	// Resource is the configured resource identifier, "" for the public
	// URL of the MCP endpoint.
	Resource string
	// TrustForwarded takes the public URL from X-Forwarded-Proto/Host.
	TrustForwarded bool
	// Tenants are the tenants accepted under a multi-tenant issuer.
	Tenants []string
	// PassToken gives the worker the access token.
	PassToken bool
}

// SettingError is a bad authorization setting.
type SettingError struct {
	Setting string // the app setting
	From    string // where it was read, never the value
	Err     error
}

func (e *SettingError) Error() string {
	return fmt.Sprintf("%s (%s): %v", e.Setting, e.From, e.Err)
}

func (e *SettingError) Unwrap() error { return e.Err }

// Load reads the configuration through lookup (value and where it was
// found, "" when unset). It returns nil and no error when SettingIssuer is
// not set: the endpoints then take no tokens.
func Load(lookup func(name string) (value, from string)) (*Config, error) {
	issuer, from := lookup(SettingIssuer)
	issuer = strings.TrimSpace(issuer)
	if issuer == "" {
		return nil, nil
	}
	c := &Config{Issuer: issuer}
	if err := checkIssuer(issuer); err != nil {
		return nil, &SettingError{Setting: SettingIssuer, From: from, Err: err}
	}
	v, _ := lookup(SettingScopes)
	for _, s := range splitList(v) {
		if s != OfflineAccess && !slices.Contains(c.Scopes, s) {
			c.Scopes = append(c.Scopes, s)
		}
	}
	v, from = lookup(SettingResource)
	c.Resource = strings.TrimSpace(v)
	if c.Resource != "" {
		if u, err := url.Parse(c.Resource); err != nil || u.Scheme == "" || u.Fragment != "" {
			return nil, &SettingError{Setting: SettingResource, From: from, Err: errors.New("not an absolute URI without a fragment")}
		}
	}
	v, from = lookup(SettingAudience)
	c.Audiences = splitList(v)
	if len(c.Audiences) == 0 {
		if c.Resource == "" {
			return nil, &SettingError{Setting: SettingAudience, From: "unset",
				Err: fmt.Errorf("the accepted audiences are needed with %s (or set %s)", SettingIssuer, SettingResource)}
		}
		c.Audiences = []string{c.Resource}
	}
	var err error
	if c.TrustForwarded, err = boolSetting(lookup, SettingTrustForwarded); err != nil {
		return nil, err
	}
	if c.PassToken, err = boolSetting(lookup, SettingPassToken); err != nil {
		return nil, err
	}
	v, from = lookup(SettingTenants)
	c.Tenants = splitList(v)
	if c.MultiTenant() && len(c.Tenants) == 0 {
		return nil, &SettingError{Setting: SettingTenants, From: "unset",
			Err: fmt.Errorf("a %s issuer needs the list of accepted tenant ids", TenantPlaceholder)}
	}
	if !c.MultiTenant() && len(c.Tenants) > 0 {
		return nil, &SettingError{Setting: SettingTenants, From: from,
			Err: fmt.Errorf("only a %s issuer takes a tenant list", TenantPlaceholder)}
	}
	return c, nil
}

// MultiTenant reports whether the issuer holds TenantPlaceholder.
func (c *Config) MultiTenant() bool { return strings.Contains(c.Issuer, TenantPlaceholder) }

// checkIssuer accepts https URLs, and http ones on a loopback host.
func checkIssuer(issuer string) error {
	u, err := url.Parse(strings.ReplaceAll(issuer, TenantPlaceholder, "tenant"))
	if err != nil || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return errors.New("not an issuer URL (scheme://host[/path], no query, fragment or user)")
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if isLoopback(u.Hostname()) {
			return nil
		}
		return errors.New("http is allowed only for a loopback issuer; use https")
	}
	return fmt.Errorf("scheme %q is not https", u.Scheme)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func boolSetting(lookup func(string) (string, string), name string) (bool, error) {
	v, from := lookup(name)
	if strings.TrimSpace(v) == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	if err != nil {
		return false, &SettingError{Setting: name, From: from, Err: errors.New("not true or false")}
	}
	return b, nil
}

// splitList splits a comma-separated setting, dropping empty entries.
func splitList(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
