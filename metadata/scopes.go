package metadata

import (
	"errors"
	"fmt"
	"strings"
)

// KeyRequiredScopes, on a tool, resource or prompt trigger, is a string holding a JSON array of
// the OAuth scopes a caller's access token must grant to call the tool,
// beyond the app's own requirements. A funcmcp key: the Azure Functions
// host ignores it (App Service's built-in authorization is for the whole
// app); funchost, as an OAuth resource server (FUNCMCP_AUTH_ISSUER),
// refuses a call whose token lacks one with 403 insufficient_scope and
// lists them in its protected resource metadata.
const KeyRequiredScopes = "requiredScopes"

// MaxRequiredScopes bounds the scopes one tool may require.
const MaxRequiredScopes = 32

// CheckScopes reports what is wrong with a list of required scopes: each a
// non-empty OAuth scope token (printable ASCII without space, quote or
// backslash, RFC 6749 §3.3), never offline_access, at most
// MaxRequiredScopes, no duplicates.
func CheckScopes(scopes []string) error {
	if len(scopes) > MaxRequiredScopes {
		return fmt.Errorf("%s: more than %d scopes", KeyRequiredScopes, MaxRequiredScopes)
	}
	seen := map[string]bool{}
	var errs []error
	for _, s := range scopes {
		switch {
		case s == "" || strings.IndexFunc(s, func(r rune) bool { return r <= 0x20 || r >= 0x7f || r == '"' || r == '\\' }) >= 0:
			errs = append(errs, fmt.Errorf("%s: %q is not a scope token", KeyRequiredScopes, s))
		case s == "offline_access":
			errs = append(errs, errors.New(KeyRequiredScopes+": offline_access is not a scope a call needs"))
		case seen[s]:
			errs = append(errs, fmt.Errorf("%s: %q is listed twice", KeyRequiredScopes, s))
		}
		seen[s] = true
	}
	return errors.Join(errs...)
}
