package binding

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/funcmcp/funcmcp/internal/jsonx"
)

// The resource URI rules are those of the Azure Functions MCP extension's
// ResourceUriHelper.cs and DefaultResourceRegistry.cs (commit cd0d1e8, host
// 1.6.0): a URI holding {variable} expressions is a template, matched by a
// regular expression built from it; other URIs are static, matched
// case-insensitively.

// The expressions below are compiled on first use, not at init: every
// program that links this package would pay for them before main, apps
// without resources included.

// templateExpr finds the {variable} expressions of a URI: braces around one
// or more characters that are not braces.
var templateExpr = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\{[^{}]+\}`) })

// sanitizeChars are the characters the extension replaces by "_" to make a
// variable name a regular expression group name.
var sanitizeChars = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[^A-Za-z0-9_]`) })

// uriScheme is an RFC 3986 scheme.
var uriScheme = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.\-]*$`) })

// IsURITemplate reports whether uri holds a {variable} expression, which
// makes it a resource template.
func IsURITemplate(uri string) bool { return templateExpr().MatchString(uri) }

// URIError is a resource URI or URI template that breaks the rules.
type URIError struct {
	URI    string
	Reason string
}

func (e *URIError) Error() string {
	return fmt.Sprintf("resource URI %s: %s", jsonx.QuoteSafe(e.URI), e.Reason)
}

func uriErr(uri, format string, args ...any) error {
	return &URIError{URI: uri, Reason: fmt.Sprintf(format, args...)}
}

// ValidateResourceURI checks a resource URI or URI template as the
// extension does when it registers a resource and when it looks one up: not
// empty or blank; in a template, balanced braces, variables that are not
// blank, hold none of / # ? & or a space, nor an encoded brace (%7B, %7D),
// are not directly next to one another, and do not collide once made group
// names (letters, digits and _; others become _; compared
// case-insensitively); braces outside a {variable} are refused; and with
// each {variable} replaced by a word, an absolute URI (a scheme, then ':').
// Errors are *URIError.
func ValidateResourceURI(uri string) error {
	if strings.TrimSpace(uri) == "" {
		return uriErr(uri, "it is empty")
	}
	probe := uri
	if IsURITemplate(uri) {
		if strings.Count(uri, "{") != strings.Count(uri, "}") {
			return uriErr(uri, "the template has unbalanced braces")
		}
		if _, err := templateVariables(uri); err != nil {
			return err
		}
		probe = templateExpr().ReplaceAllString(uri, "template")
	} else if strings.ContainsAny(uri, "{}") {
		return uriErr(uri, "it holds braces that are not a {variable} expression (unmatched or empty braces)")
	}
	if !absoluteURI(probe) {
		return uriErr(uri, "it is not an absolute URI (a scheme such as test: or https: must come first)")
	}
	return nil
}

// absoluteURI reports whether s is an absolute URI: an RFC 3986 scheme and
// ':', no control characters or spaces, and a syntax url.Parse accepts.
func absoluteURI(s string) bool {
	scheme, _, ok := strings.Cut(s, ":")
	if !ok || !uriScheme().MatchString(scheme) {
		return false
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f {
			return false
		}
	}
	u, err := url.Parse(s)
	return err == nil && u.Scheme != ""
}

// templateVariables returns the variables of a template in order, checked
// as [ValidateResourceURI] says.
func templateVariables(uri string) ([]string, error) {
	locs := templateExpr().FindAllStringIndex(uri, -1)
	if len(locs) == 0 {
		return nil, uriErr(uri, "the template holds no {variable} expression")
	}
	for i := 0; i+1 < len(locs); i++ {
		if locs[i][1] == locs[i+1][0] {
			return nil, uriErr(uri, "template expressions must be separated by at least one literal character or delimiter")
		}
	}
	names := make([]string, len(locs))
	for i, l := range locs {
		names[i] = uri[l[0]+1 : l[1]-1]
	}
	seen := map[string]string{} // lower-case sanitized → first variable
	for _, n := range names {
		key := strings.ToLower(sanitizeChars().ReplaceAllString(n, "_"))
		if first, dup := seen[key]; dup {
			return nil, uriErr(uri, "the template has duplicate or colliding variable names: %q and %q both resolve to %q", first, n, key)
		}
		seen[key] = n
	}
	for _, n := range names {
		switch {
		case strings.TrimSpace(n) == "":
			return nil, uriErr(uri, "template variables cannot be empty")
		case strings.ContainsAny(n, "/#?& "):
			return nil, uriErr(uri, "template variable %q holds a character that is not allowed (/ # ? & or a space)", n)
		case strings.Contains(strings.ToLower(n), "%7b") || strings.Contains(strings.ToLower(n), "%7d"):
			return nil, uriErr(uri, "template variable %q holds an encoded brace", n)
		}
	}
	return names, nil
}

// URITemplate is a checked resource URI template and its matcher.
type URITemplate struct {
	text      string
	variables []string
	re        *regexp.Regexp
	structure string
}

// ErrNotTemplate is the reason ParseURITemplate gives for a URI without a
// {variable} expression.
var ErrNotTemplate = errors.New("the URI holds no {variable} expression: it is a static resource, not a template")

// ParseURITemplate checks a URI template ([ValidateResourceURI]) and builds
// its matcher as the extension does: each {variable} matches one or more
// characters up to the next / ? or # (up to the next & or # when the
// variable follows ? or &), the literal text in between matches itself,
// the whole URI must match, and letters match in either case.
func ParseURITemplate(uri string) (*URITemplate, error) {
	if !IsURITemplate(uri) {
		return nil, &URIError{URI: uri, Reason: ErrNotTemplate.Error()}
	}
	if err := ValidateResourceURI(uri); err != nil {
		return nil, err
	}
	vars, _ := templateVariables(uri) // checked above
	var sb strings.Builder
	sb.WriteString(`(?i)\A`)
	last := 0
	for _, l := range templateExpr().FindAllStringIndex(uri, -1) {
		sb.WriteString(regexp.QuoteMeta(uri[last:l[0]]))
		stop := `([^/?#]+)`
		if l[0] > 0 && (uri[l[0]-1] == '?' || uri[l[0]-1] == '&') {
			stop = `([^&#]+)`
		}
		sb.WriteString(stop)
		last = l[1]
	}
	sb.WriteString(regexp.QuoteMeta(uri[last:]))
	// .NET's $ also matches before a final newline.
	sb.WriteString(`\n?\z`)
	re, err := regexp.Compile(sb.String())
	if err != nil { // cannot happen: every part is quoted or fixed
		return nil, uriErr(uri, "building its matcher: %v", err)
	}
	return &URITemplate{text: uri, variables: vars, re: re, structure: TemplateStructure(uri)}, nil
}

// String returns the template text.
func (t *URITemplate) String() string { return t.text }

// Variables returns the template's variable names, in order.
func (t *URITemplate) Variables() []string { return append([]string(nil), t.variables...) }

// Match matches a requested URI against the template and returns the value
// of each variable (as it appears in the URI: not percent-decoded).
func (t *URITemplate) Match(uri string) (map[string]string, bool) {
	m := t.re.FindStringSubmatch(uri)
	if m == nil {
		return nil, false
	}
	vars := make(map[string]string, len(t.variables))
	for i, name := range t.variables {
		vars[name] = m[i+1]
	}
	return vars, true
}

// Structure returns the template with every {variable} replaced by {_}:
// two templates with the same structure, compared case-insensitively,
// match the same URIs, and the extension refuses the second one.
func (t *URITemplate) Structure() string { return t.structure }

// TemplateStructure is [URITemplate.Structure] for any URI.
func TemplateStructure(uri string) string { return templateExpr().ReplaceAllString(uri, "{_}") }
