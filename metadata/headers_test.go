package metadata

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// identityHeadersJSON are the identity headers funchost (and App Service
// authentication) give a call, with a principal of a typical Entra ID
// token's size (about 650 bytes once in base64).
func identityHeadersJSON() string {
	claims := `{"auth_typ":"aad","claims":[` +
		`{"typ":"aud","val":"api://3f0a6c1e-0d5b-4a57-9c3e-7b2f4b1d9e21"},` +
		`{"typ":"iss","val":"https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0"},` +
		`{"typ":"name","val":"Alex Example"},{"typ":"oid","val":"8c2b8a4e-5f0e-4a3b-9d77-0c1e2f3a4b5c"},` +
		`{"typ":"preferred_username","val":"alex@example.com"},{"typ":"scp","val":"Tools.Read Tools.Admin"},` +
		`{"typ":"sub","val":"pQ9bX2rT7mK1vZ8nL4cH6jW3yF5sD0aE"},{"typ":"tid","val":"72f988bf-86f1-41af-91ab-2d7cd011db47"}],` +
		`"name_typ":"name","role_typ":"roles"}`
	p := base64.StdEncoding.EncodeToString([]byte(claims))
	return `"X-Ms-Client-Principal":"` + p + `","X-Ms-Client-Principal-Id":"8c2b8a4e-5f0e-4a3b-9d77-0c1e2f3a4b5c",` +
		`"X-Ms-Client-Principal-Idp":"aad","X-Ms-Client-Principal-Name":"alex@example.com",`
}

// toolContextJSON is a tools/call invocation context as funchost sends it,
// with or without the caller's identity headers.
func toolContextJSON(identity bool) []byte {
	var hs strings.Builder
	hs.WriteString(`"Accept":"application/json, text/event-stream","Content-Length":"112","Content-Type":"application/json",`)
	hs.WriteString(`"Mcp-Protocol-Version":"2025-06-18","Mcp-Session-Id":"b3c1f0d2-9a8e-4c7b-8d6f-5e4a3b2c1d0e",`)
	if identity {
		hs.WriteString(identityHeadersJSON())
	}
	hs.WriteString(`"User-Agent":"node"`)
	return []byte(`{"name":"get_weather","arguments":{"city":"Oslo"},"sessionid":"b3c1f0d2-9a8e-4c7b-8d6f-5e4a3b2c1d0e",` +
		`"clientinfo":{"name":"bench","version":"1.0"},"transport":{"name":"http-streamable",` +
		`"sessionId":"b3c1f0d2-9a8e-4c7b-8d6f-5e4a3b2c1d0e","properties":{"headers":{` + hs.String() + `}}}}`)
}

func TestDecodeToolInvocationContextIdentityHeadersCostNoAllocations(t *testing.T) {
	// A call's identity headers are for the tools that ask who calls: one
	// that never does must not pay for decoding them.
	allocs := func(raw []byte) float64 {
		return testing.AllocsPerRun(200, func() {
			if _, err := DecodeToolInvocationContext(raw); err != nil {
				panic(err)
			}
		})
	}
	without, with := allocs(toolContextJSON(false)), allocs(toolContextJSON(true))
	assert.LessOrEqual(t, with, without, "allocations decoding a context with the identity headers (%v) and without (%v)", with, without)

	c, err := DecodeToolInvocationContext(toolContextJSON(true))
	require.NoError(t, err)
	v, ok := c.Transport.Header("x-ms-client-principal-idp")
	assert.True(t, ok)
	assert.Equal(t, "aad", v, "the headers are all there once read")
	// Reading one header (telemetry reads traceparent on every call)
	// decodes that value alone.
	for _, name := range []string{"Mcp-Session-Id", "mcp-session-id", "traceparent"} {
		allocs := testing.AllocsPerRun(100, func() { _, _ = c.Transport.Header(name) })
		assert.LessOrEqual(t, allocs, float64(1), name)
	}
}

func BenchmarkDecodeToolInvocationContext(b *testing.B) {
	for _, identity := range []bool{false, true} {
		name := "no-identity"
		if identity {
			name = "identity"
		}
		raw := toolContextJSON(identity)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if _, err := DecodeToolInvocationContext(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestHeadersDecodeAsAMapDid(t *testing.T) {
	// Every reader sees what decoding into map[string]string gave: the
	// same entries (duplicates: the last; null: ""), the same failures, the
	// same encoding, the same case-insensitive lookup.
	for _, obj := range []string{
		`{}`, ` { } `, `null`,
		`{"Accept":"a, b","accept":"lower","X-\u00e9":"\u2028 \"q\" \\ <&>","Dup":"1","Dup":"2","N":null}`,
		`{ "x-ms-client-principal-id" : "oid-1" , "X-MS-CLIENT-PRINCIPAL-NAME":"ada@example.com" }`,
		`{"A":1}`, `{"A":{}}`, `{"A":["x"]}`, `{"A":true}`, `[]`, `"h"`, `7`,
	} {
		t.Run(obj, func(t *testing.T) {
			var want struct {
				Headers map[string]string `json:"headers,omitempty"`
			}
			wantErr := json.Unmarshal([]byte(`{"headers":`+obj+`}`), &want)
			var got TransportProperties
			err := json.Unmarshal([]byte(`{"headers":`+obj+`}`), &got)
			if wantErr != nil {
				assert.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, len(want.Headers) == 0, got.Headers.IsZero())
			if len(want.Headers) > 0 {
				assert.Equal(t, want.Headers, got.Headers.Map())
			}
			for _, name := range []string{"Accept", "ACCEPT", "accept", "x-\u00c9", "X-\u00e9", "dup", "DUP", "n", "X-Ms-Client-Principal-Name", "none", ""} {
				wv, wok := LookupFoldMap(want.Headers, name)
				gv, gok := got.Headers.Get(name)
				assert.Equal(t, wok, gok, name)
				assert.Equal(t, wv, gv, name)
			}
			wantJSON, err := Marshal(want)
			require.NoError(t, err)
			gotJSON, err := Marshal(&got)
			require.NoError(t, err)
			assert.Equal(t, string(wantJSON), string(gotJSON))
			appended, err := (&ToolInvocationContext{Transport: &Transport{Properties: &got}}).AppendJSON(nil)
			require.NoError(t, err)
			assert.Equal(t, `{"name":"","transport":{"name":"","properties":`+string(wantJSON)+`}}`, string(appended))
		})
	}
}

func TestHeadersReadConcurrently(t *testing.T) {
	c, err := DecodeToolInvocationContext(toolContextJSON(true))
	require.NoError(t, err)
	done := make(chan string)
	for range 4 {
		go func() {
			v, _ := c.Transport.Header("mcp-session-id")
			done <- v
		}()
	}
	for range 4 {
		assert.Equal(t, "b3c1f0d2-9a8e-4c7b-8d6f-5e4a3b2c1d0e", <-done)
	}
}

// FuzzHeadersGet: a header looked up in the JSON not yet decoded is what
// LookupFoldMap finds in the decoded map, and decoding fails exactly when
// decoding a map fails.
func FuzzHeadersGet(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"Accept":"a","accept":"b","ACCEPT":"c","accept":"d"}`, "aCCEPT"},
		{`{"X-\u00e9":"1","x-\u00c9":"2"}`, "X-\u00c9"},
		{`{"\u212a":"kelvin","k":"k"}`, "K"},
		{`{"A\ud800":"lone","A\ufffd":"repl"}`, "A\ufffd"},
		{"{\"A\xff\":\"bad\"}", "A\ufffd"},
		{`{"N":null,"n":"x"}`, "N"},
		{`{"a":1}`, "a"}, {`{}`, "a"}, {`null`, "a"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, obj, name string) {
		var want map[string]string
		wantErr := json.Unmarshal([]byte(obj), &want)
		var got Headers
		err := json.Unmarshal([]byte(obj), &got)
		if (wantErr != nil) != (err != nil) {
			t.Fatalf("%s: decoding a map: %v, Headers: %v", obj, wantErr, err)
		}
		if err != nil {
			return
		}
		wv, wok := LookupFoldMap(want, name)
		gv, gok := got.Get(name)
		if wv != gv || wok != gok {
			t.Fatalf("%s: Get(%q) = %q, %v; the map gives %q, %v", obj, name, gv, gok, wv, wok)
		}
		if len(want) > 0 && !reflect.DeepEqual(want, got.Map()) {
			t.Fatalf("%s: Map() = %v, want %v", obj, got.Map(), want)
		}
	})
}

// TestHeadersOfHoldsItsText: HeadersOf keeps the object it is given, not
// a copy (an in-process call's headers are written for it alone), and
// reads it as UnmarshalJSON does.
func TestHeadersOfHoldsItsText(t *testing.T) {
	data := []byte(`{"Accept":"application/json","X-Test":"yes","Gone":null}`)
	h, err := HeadersOf(data)
	require.NoError(t, err)
	var u Headers
	require.NoError(t, u.UnmarshalJSON(data))
	assert.Equal(t, u.Map(), h.Map())
	v, ok := h.Get("x-test")
	assert.True(t, ok)
	assert.Equal(t, "yes", v)
	assert.Equal(t, 1.0, testing.AllocsPerRun(50, func() { _, _ = HeadersOf(data) }), "the header set alone")
	_, err = HeadersOf([]byte(`{"A":1}`))
	assert.Error(t, err)
}
