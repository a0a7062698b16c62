package oauth

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScopedMayAsk: a body is passed unscanned only when it cannot name a
// scoped tool, prompt or resource; any escape, invalid UTF-8, the tool's
// name as a string anywhere, or the method of a scoped kind keeps it read.
func TestScopedMayAsk(t *testing.T) {
	tools := NewScoped([]string{"admin", "pé"}, false, false)
	all := NewScoped([]string{"admin"}, true, true)
	for _, tc := range []struct {
		s    *Scoped
		body string
		want bool
	}{
		{tools, `{"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo"}}}`, false},
		{tools, `{"method":"tools/call","params":{"name":"admin"}}`, true},
		{tools, `{"method":"tools/call","params":{"name":"pé"}}`, true},
		{tools, `{"method":"tools/call","params":{"name":"adm\u0069n"}}`, true},
		{tools, `{"method":"tools/call","params":{"n\u0061me":"x"}}`, true},
		{tools, "{\"method\":\"tools/call\",\"params\":{\"name\":\"p\xe9\"}}", true},
		{tools, `{"method":"tools/call","params":{"name":"get_weather","arguments":{"note":"admin"}}}`, true},
		{tools, `{"method":"tools/call","params":{"name":"administrator"}}`, false},
		{tools, `{"method":"prompts/get","params":{"name":"ADMIN"}}`, false},
		{tools, `{"method":"resources/read","params":{"uri":"file:///admin"}}`, false},
		{all, `{"method":"prompts/get","params":{"name":"plan"}}`, true},
		{all, `{"method":"resources/read","params":{"uri":"file:///a"}}`, true},
		{all, `[{"method":"tools/list"},{"method":"tools/call","params":{"name":"get_weather"}}]`, false},
	} {
		assert.Equal(t, tc.want, tc.s.MayAsk([]byte(tc.body)), tc.body)
	}

	// With more scoped tools than it looks for, every body is scanned: a
	// large body is not searched once per name.
	many := make([]string, maxScreenNames+1)
	for i := range many {
		many[i] = "admin" + strconv.Itoa(i)
	}
	assert.True(t, NewScoped(many, false, false).MayAsk([]byte(`{"method":"tools/call","params":{"name":"get_weather"}}`)))
	assert.False(t, NewScoped(many[:maxScreenNames], false, false).MayAsk([]byte(`{"method":"tools/call","params":{"name":"get_weather"}}`)))
	// So is a body too large to search for each name.
	large := []byte(`{"method":"tools/call","params":{"name":"get_weather","arguments":{"x":"` + strings.Repeat("a", maxScreenBytes) + `"}}}`)
	assert.True(t, tools.MayAsk(large))
}

// FuzzScopedMayAsk: whatever the body, when MayAsk is false Operations
// finds no call of the scoped tool, no prompts/get when prompts may need
// scopes and no resources/read when resources may.
func FuzzScopedMayAsk(f *testing.F) {
	f.Add(`{"method":"tools/call","params":{"name":"admin"}}`, "admin", true, true)
	f.Add(`{"method":"tools\/call","params":{"name":"adm\u0069n"}}`, "admin", false, false)
	f.Add(`[{"method":"prompts/get","params":{"name":"Plan"}},{"method":"resources/read","params":{"uri":"x:y"}}]`, "plan", true, true)
	f.Add("{\"method\":\"tools/call\",\"params\":{\"name\":\"\xff\"}}", "\ufffd", false, false)
	f.Fuzz(func(t *testing.T, body, tool string, prompts, resources bool) {
		s := NewScoped([]string{tool}, prompts, resources)
		if s.MayAsk([]byte(body)) {
			return
		}
		for _, op := range Operations([]byte(body)) {
			switch op.Method {
			case "tools/call":
				require.NotEqual(t, tool, op.Name, "a call of the scoped tool passed unscanned")
			case "prompts/get":
				require.False(t, prompts, "a prompts/get passed unscanned")
			case "resources/read":
				require.False(t, resources, "a resources/read passed unscanned")
			}
		}
	})
}

// TestProtectDoesNotScanACallOfAnUnscopedTool: with Scoped, a call of a
// tool that needs no scope is passed on without its operation being read
// (no operation slice, no name string); a call of the scoped tool, even
// spelled with escapes, is still refused.
func TestProtectDoesNotScanACallOfAnUnscopedTool(t *testing.T) {
	f := newFixture(t, nil)
	token := f.op.Token(t, f.claims(readScope))
	const call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo"}}}`
	var asked []Operation
	required := func(o Operation) []string {
		asked = append(asked, o)
		if o.Name == "admin" {
			return []string{adminScope}
		}
		return nil
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	guard := func(s *Scoped) http.Handler {
		return NewGuard(f.cfg, f.guard.v, Options{Endpoint: "/runtime/webhooks/mcp", Required: required, Declared: []string{adminScope}, Scoped: s}).Protect(ok)
	}
	serve := func(h http.Handler, body string) int {
		r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7071/runtime/webhooks/mcp", strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	scanned, screened := guard(nil), guard(NewScoped([]string{"admin"}, false, false))

	require.Equal(t, http.StatusOK, serve(scanned, call))
	require.Equal(t, []Operation{{"tools/call", "get_weather"}}, asked)
	asked = nil
	require.Equal(t, http.StatusOK, serve(screened, call))
	assert.Empty(t, asked, "the body of an unscoped call was scanned")

	for _, body := range []string{
		`{"method":"tools/call","params":{"name":"admin"}}`,
		`{"method":"tools/call","params":{"name":"adm\u0069n"}}`,
		`[{"method":"tools/list"},{"method":"tools/call","params":{"name":"admin"}}]`,
	} {
		assert.Equal(t, http.StatusForbidden, serve(screened, body), body)
	}
	assert.True(t, slices.ContainsFunc(asked, func(o Operation) bool { return o.Name == "admin" }))
}

// TestProtectScreenedCallAllocations: passing a call of an unscoped tool
// unscanned saves at least the operation's slice and name.
func TestProtectScreenedCallAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts")
	}
	f := newFixture(t, nil)
	token := f.op.Token(t, f.claims(readScope))
	const call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_weather","arguments":{"city":"Oslo"}}}`
	required := func(o Operation) []string {
		if o.Name == "admin" {
			return []string{adminScope}
		}
		return nil
	}
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	allocs := func(s *Scoped) float64 {
		h := NewGuard(f.cfg, f.guard.v, Options{Endpoint: "/runtime/webhooks/mcp", Required: required, Declared: []string{adminScope}, Scoped: s}).Protect(ok)
		return testing.AllocsPerRun(200, func() {
			r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:7071/runtime/webhooks/mcp", strings.NewReader(call))
			r.Header.Set("Authorization", "Bearer "+token)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			require.Equal(t, http.StatusOK, w.Code)
		})
	}
	scanned, screened := allocs(nil), allocs(NewScoped([]string{"admin"}, false, false))
	t.Logf("allocations per call: scanned %v, screened %v", scanned, screened)
	assert.LessOrEqual(t, screened, scanned-2, "screened %v, scanned %v allocations", screened, scanned)
}
