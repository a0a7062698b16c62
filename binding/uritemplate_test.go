package binding

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The cases follow the extension's ResourceUriHelper rules (commit
// cd0d1e8): what it refuses at registration, funcmcp refuses at build time
// and at load.
func TestValidateResourceURI(t *testing.T) {
	for _, tc := range []struct {
		uri  string
		want string // "" = valid, else a part of the reason
	}{
		{"test://static-text", ""},
		{"ui://bar_chart/view", ""},
		{"https://example.com/a?b=c#d", ""},
		{"urn:isbn:0451450523", ""},
		{"file:///etc/hosts", ""},
		{"test://template/{id}/data", ""},
		{"test://search?q={query}&page={page}", ""},
		{"test://{category}items{tag}", ""},
		{"test://{+path}", ""},
		{"test://{a.b}/{a-c}", ""},
		{"", "empty"},
		{"   ", "empty"},
		{"no-scheme", "not an absolute URI"},
		{"/relative/path", "not an absolute URI"},
		{"1abc://x", "not an absolute URI"},
		{"test://a b", "not an absolute URI"},
		{"test://x\n", "not an absolute URI"},
		{"test://{id}{name}", "separated by at least one literal character"},
		{"test://{id}/{ID}", "colliding variable names"},
		{"test://{a-b}/{a_b}", "colliding variable names"},
		{"test://{a/b}", "not allowed"},
		{"test://{a b}", "not allowed"},
		{"test://{a?}", "not allowed"},
		{"test://{a&b}", "not allowed"},
		{"test://{a#}", "not allowed"},
		{"test://{ }", "cannot be empty"},
		{"test://{a%7Bb}", "encoded brace"},
		{"test://{a%7db}", "encoded brace"},
		{"test://{id}}", "unbalanced braces"},
		{"test://{{id}", "unbalanced braces"},
		{"test://{}", "braces that are not a {variable}"},
		{"test://profile/{", "braces that are not a {variable}"},
		{"{id}", "not an absolute URI"},
	} {
		t.Run(tc.uri, func(t *testing.T) {
			err := ValidateResourceURI(tc.uri)
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			var ue *URIError
			require.ErrorAs(t, err, &ue)
			assert.Equal(t, tc.uri, ue.URI)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestURITemplateMatch(t *testing.T) {
	for _, tc := range []struct {
		template string
		uri      string
		want     map[string]string // nil = no match
	}{
		{"test://template/{id}/data", "test://template/123/data", map[string]string{"id": "123"}},
		{"test://template/{id}/data", "TEST://Template/abc/DATA", map[string]string{"id": "abc"}},
		{"test://template/{id}/data", "test://template/1/2/data", nil},
		{"test://template/{id}/data", "test://template//data", nil},
		{"test://template/{id}/data", "test://template/123/data/more", nil},
		{"test://template/{id}/data", "prefix-test://template/123/data", nil},
		{"test://template/{id}/data", "test://template/123/data\n", map[string]string{"id": "123"}},
		{"test://template/{id}/data", "test://template/a%2Fb/data", map[string]string{"id": "a%2Fb"}},
		{"test://template/{id}/data", "test://template/a?b/data", nil},
		// A variable right after ? or & stops at & or #; any other stops at / ? or #
		// (the character before the brace decides, as in the extension).
		{"test://search?q={query}&page={page}", "test://search?q=a&b&page=2", map[string]string{"query": "a&b", "page": "2"}},
		{"test://search?q={query}&page={page}", "test://search?q=a/b&page=2", nil},
		{"test://search?{query}", "test://search?a/b", map[string]string{"query": "a/b"}},
		{"test://search?{q}&{r}", "test://search?a&b", map[string]string{"q": "a", "r": "b"}},
		{"test://search?{q}&{r}", "test://search?a&b&c", nil},
		{"test://search?{q}", "test://search?x#frag", nil},
		{"test://{category}items{tag}", "test://shoesitemsred", map[string]string{"category": "shoes", "tag": "red"}},
		{"test://{category}items{tag}", "test://itemsitemsitems", map[string]string{"category": "items", "tag": "items"}},
		{"test://files/{path}.txt", "test://files/a.b.txt", map[string]string{"path": "a.b"}},
		{"test://{+path}", "test://x", map[string]string{"+path": "x"}},
		{"test://u/{name}", "test://u/Ünïcode", map[string]string{"name": "Ünïcode"}},
	} {
		t.Run(tc.template+" "+tc.uri, func(t *testing.T) {
			tmpl, err := ParseURITemplate(tc.template)
			require.NoError(t, err)
			got, ok := tmpl.Match(tc.uri)
			if tc.want == nil {
				assert.False(t, ok, "matched with %v", got)
				return
			}
			require.True(t, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseURITemplate(t *testing.T) {
	tmpl, err := ParseURITemplate("test://a/{x}/b/{y}")
	require.NoError(t, err)
	assert.Equal(t, []string{"x", "y"}, tmpl.Variables())
	assert.Equal(t, "test://a/{x}/b/{y}", tmpl.String())
	assert.Equal(t, "test://a/{_}/b/{_}", tmpl.Structure())

	_, err = ParseURITemplate("test://static")
	require.Error(t, err)
	assert.Contains(t, err.Error(), ErrNotTemplate.Error())
	_, err = ParseURITemplate("test://{a}{b}")
	var ue *URIError
	assert.ErrorAs(t, err, &ue)
	assert.True(t, IsURITemplate("x:{a}"))
	assert.False(t, IsURITemplate("x:{}"))
}

// TestTemplateStructureDuplicates shows the registry's rule: templates that
// differ only in their variable names, or in case, match the same URIs and
// the second is refused; templates with different literal parts are not.
func TestTemplateStructureDuplicates(t *testing.T) {
	for _, tc := range []struct {
		first, second string
		duplicate     bool
	}{
		{"test://users/{id}", "test://users/{name}", true},
		{"test://users/{id}", "TEST://Users/{ID}", true},
		{"test://users/{id}/posts/{post}", "test://users/{u}/posts/{p}", true},
		{"test://users/{id}", "test://users/{id}/posts", false},
		{"test://users/{id}", "test://user/{id}", false},
		{"test://a?q={q}", "test://a?q={query}", true},
		{"test://a/{x}", "test://a/x", false}, // a static one beside a template
	} {
		t.Run(tc.first+" "+tc.second, func(t *testing.T) {
			var reg Registry
			require.NoError(t, reg.AddResource(mustResource(t, "f1", tc.first)))
			err := reg.AddResource(mustResource(t, "f2", tc.second))
			if !tc.duplicate {
				assert.NoError(t, err)
				return
			}
			var de *DuplicateError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tc.first, de.Existing)
			assert.Equal(t, "f1", de.Function)
			var le *LoadError
			require.ErrorAs(t, err, &le)
			assert.Equal(t, "f2", le.Function)
			assert.Contains(t, err.Error(), "equivalent URI pattern")
		})
	}
}

func mustResource(t *testing.T, function, uri string) *Resource {
	t.Helper()
	fn, b := resourceBinding(t, function, `{"type":"mcpResourceTrigger","name":"context","uri":`+quote(uri)+`,"resourceName":"r"}`)
	r, err := LoadResource(fn, b, "")
	require.NoError(t, err)
	return r
}

func TestURIErrorEchoesSafely(t *testing.T) {
	long := "no-scheme-" + strings.Repeat("x", 300) + "\xff"
	err := ValidateResourceURI(long)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "…", "a long URI is cut")
	assert.NotContains(t, err.Error(), "\xff")
}
