package invoke

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// identityEncoder holds headers already encoded, as the OAuth guard keeps
// a token's identity headers.
type identityEncoder struct {
	values, members map[string]string
	spliced         int // members given
}

func newIdentityEncoder(hs map[string]string) *identityEncoder {
	e := &identityEncoder{values: hs, members: map[string]string{}}
	for name, value := range hs {
		m := metadata.AppendJSONString(nil, name)
		m = append(m, ':')
		e.members[name] = string(metadata.AppendJSONString(m, value))
	}
	return e
}

func (e *identityEncoder) EncodedHeader(name, value string) (string, bool) {
	if v, ok := e.values[name]; !ok || v != value {
		return "", false
	}
	e.spliced++
	return e.members[name], true
}

// identityHeaders are a token's identity headers, the principal of a
// typical Entra ID token's size.
func identityHeaders() map[string]string {
	principal := `{"auth_typ":"aad","claims":[{"typ":"aud","val":"api://3f0a6c1e-0d5b-4a57-9c3e-7b2f4b1d9e21"},` +
		`{"typ":"iss","val":"https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0"},` +
		`{"typ":"name","val":"Alex Example"},{"typ":"oid","val":"8c2b8a4e-5f0e-4a3b-9d77-0c1e2f3a4b5c"},` +
		`{"typ":"preferred_username","val":"alex@example.com"},{"typ":"scp","val":"Tools.Read Tools.Admin"},` +
		`{"typ":"sub","val":"pQ9bX2rT7mK1vZ8nL4cH6jW3yF5sD0aE"},{"typ":"tid","val":"72f988bf-86f1-41af-91ab-2d7cd011db47"}],` +
		`"name_typ":"name","role_typ":"roles"}`
	return map[string]string{
		"X-Ms-Client-Principal":      base64.StdEncoding.EncodeToString([]byte(principal)),
		"X-Ms-Client-Principal-Id":   "8c2b8a4e-5f0e-4a3b-9d77-0c1e2f3a4b5c",
		"X-Ms-Client-Principal-Name": "alex@example.com",
		"X-Ms-Client-Principal-Idp":  "aad",
	}
}

// clientHeaders are the headers of a tools/call from an MCP client, with
// the identity headers the guard sets for its token when identity is true.
func clientHeaders(identity bool) http.Header {
	h := http.Header{
		"Accept":               {"application/json, text/event-stream"},
		"Accept-Encoding":      {"gzip, deflate"},
		"Content-Length":       {"112"},
		"Content-Type":         {"application/json"},
		"Mcp-Protocol-Version": {"2025-06-18"},
		"Mcp-Session-Id":       {"b3c1f0d2-9a8e-4c7b-8d6f-5e4a3b2c1d0e"},
		"User-Agent":           {"node"},
	}
	if identity {
		for k, v := range identityHeaders() {
			h[k] = []string{v}
		}
	}
	return h
}

// bodyEncodedEachTime is the invocation as Body encoded it before the
// identity headers were spliced in: every forwarded header encoded on each
// call, through a map.
func bodyEncodedEachTime(f *Function, in *Call, now time.Time) []byte {
	transport := in.Transport
	if transport == "" {
		transport = metadata.TransportStreamableHTTP
	}
	tc := metadata.ToolInvocationContext{Name: f.Tool, Arguments: in.Arguments, SessionID: in.SessionID, ClientInfo: in.ClientInfo,
		Transport: &metadata.Transport{Name: transport, SessionID: in.SessionID}}
	if hs := ForwardedHeaders(in.Headers); hs != nil {
		tc.Transport.Properties = &metadata.TransportProperties{Headers: metadata.MakeHeaders(hs)}
	}
	buf := append([]byte(`{"Data":{`), metadata.AppendJSONString(nil, f.DataKey)...)
	buf = append(buf, ':')
	buf, err := tc.AppendJSON(buf)
	if err != nil {
		panic(err)
	}
	buf = append(buf, `},"Metadata":{"mcptoolargs":{`...)
	first := true
	for k, v := range in.Arguments {
		if !first {
			buf = append(buf, ',')
		}
		first = false
		buf = metadata.AppendJSONString(buf, k)
		buf = append(buf, ':')
		buf = metadata.AppendJSONString(buf, argumentText(v))
	}
	buf = append(buf, '}')
	if in.SessionID != "" {
		buf = append(buf, `,"mcpsessionid":`...)
		buf = metadata.AppendJSONString(buf, in.SessionID)
	}
	buf = append(buf, `,"sys":{"MethodName":`...)
	buf = metadata.AppendJSONString(buf, f.Name)
	buf = append(buf, `,"UtcNow":"`...)
	buf = now.UTC().AppendFormat(buf, time.RFC3339Nano)
	return append(buf, `","RandGuid":"00000000-0000-0000-0000-000000000000"}}}`...)
}

var randGUID = regexp.MustCompile(`"RandGuid":"[0-9a-f-]{36}"`)

func TestBodyWithEncodedHeadersAsEncodedEachTime(t *testing.T) {
	// The identity headers spliced in as the guard encoded them once give
	// the body every header encoded on each call gave, byte for byte.
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	f := &Function{Name: "get_weather", DataKey: "ctx", Tool: "weather"}
	edited := clientHeaders(true)
	edited["X-Ms-Client-Principal-Name"] = []string{"someone else"} // not what was encoded: encoded again
	odd := clientHeaders(true)
	odd["X-Ms-Client-Principal-Idp"] = []string{"aad", "twice"}
	odd["X-Functions-Key"] = []string{"secret"}
	odd["x-lower"] = []string{"\u2028 <\"q\"> \\ \x01 \xff"}
	odd["Empty"] = nil
	for name, in := range map[string]*Call{
		"identity":      {Arguments: map[string]json.RawMessage{"city": json.RawMessage(`"Oslo"`)}, SessionID: "s-1", Headers: clientHeaders(true)},
		"no identity":   {Arguments: map[string]json.RawMessage{"city": json.RawMessage(`"Oslo"`)}, SessionID: "s-1", Headers: clientHeaders(false)},
		"edited":        {Arguments: map[string]json.RawMessage{"opts": json.RawMessage(`{"a": [1, "x\"y"]}`)}, Headers: edited},
		"odd headers":   {ClientInfo: &metadata.ClientInfo{Name: "c", Title: "T", Version: "1"}, Transport: metadata.TransportSSE, Headers: odd},
		"only the key":  {Headers: http.Header{"X-Functions-Key": {"secret"}}},
		"no headers":    {Arguments: map[string]json.RawMessage{"n": json.RawMessage(`7`)}},
		"empty headers": {Headers: http.Header{}},
	} {
		t.Run(name, func(t *testing.T) {
			want := bodyEncodedEachTime(f, in, now)
			enc := newIdentityEncoder(identityHeaders())
			in.Encoded = enc
			got, err := Body(f, in, now)
			require.NoError(t, err)
			switch name {
			case "identity":
				assert.Equal(t, 4, enc.spliced, "every identity header spliced in")
			case "edited", "odd headers":
				assert.Equal(t, 3, enc.spliced, "a header not as encoded is encoded again")
			}
			got = randGUID.ReplaceAll(got, []byte(`"RandGuid":"00000000-0000-0000-0000-000000000000"`))
			assert.Equal(t, string(want), string(got))
			assert.True(t, json.Valid(got))
		})
	}
}

func TestBodyAllocations(t *testing.T) {
	// Body allocates its buffer once, sized from what it writes, and no map
	// of the headers: with a token's identity headers (about 1.7 KiB) as
	// without.
	f := &Function{Name: "get_weather", DataKey: "ctx", Tool: "get_weather"}
	now := time.Now()
	var counts [2]float64
	for i, identity := range []bool{false, true} {
		in := &Call{Arguments: map[string]json.RawMessage{"city": json.RawMessage(`"Oslo"`)}, SessionID: "b3c1f0d2-9a8e-4c7b-8d6f-5e4a3b2c1d0e",
			ClientInfo: &metadata.ClientInfo{Name: "bench", Version: "1.0"}, Headers: clientHeaders(identity)}
		if identity {
			in.Encoded = newIdentityEncoder(identityHeaders())
		}
		var body []byte
		counts[i] = testing.AllocsPerRun(100, func() {
			var err error
			if body, err = Body(f, in, now); err != nil {
				panic(err)
			}
		})
		assert.Less(t, cap(body), 2*len(body), "sized from what it writes, not grown (%d of %d)", len(body), cap(body))
		t.Logf("identity headers %v: %v allocations, %d bytes in %d", identity, counts[i], len(body), cap(body))
	}
	assert.Equal(t, counts[0], counts[1], "the identity headers cost no allocation")
	if !raceEnabled { // the race detector's build allocates more
		// The body, the headers' sorted names, the argument's text.
		assert.LessOrEqual(t, counts[1], float64(3))
	}
}

func BenchmarkBody(b *testing.B) {
	f := &Function{Name: "get_weather", DataKey: "ctx", Tool: "get_weather"}
	for _, identity := range []bool{false, true} {
		in := &Call{Arguments: map[string]json.RawMessage{"city": json.RawMessage(`"Oslo"`)}, SessionID: "b3c1f0d2-9a8e-4c7b-8d6f-5e4a3b2c1d0e",
			ClientInfo: &metadata.ClientInfo{Name: "bench", Version: "1.0"}, Headers: clientHeaders(identity)}
		if identity {
			in.Encoded = newIdentityEncoder(identityHeaders())
		}
		b.Run(fmt.Sprintf("identity=%v", identity), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Body(f, in, time.Now()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
