package worker

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/iotest"
)

// BenchmarkInvoke_Identity is one invocation through Handler as funchost
// sends it (the context as an object), with the client's usual headers and
// with them and the identity headers of an access token (a principal of a
// typical Entra ID token's size): the difference is what a token costs the
// worker when the tool does not ask who calls.
func BenchmarkInvoke_Identity(b *testing.B) {
	for _, identity := range []bool{false, true} {
		name := "no-identity"
		if identity {
			name = "identity"
		}
		payload := identityPayload(b, identity)
		b.Run(name, func(b *testing.B) {
			a, _ := testAppWith(b, &Options{Stderr: io.Discard, Stdout: io.Discard, ScriptRoot: b.TempDir()})
			h := a.Handler()
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/greet", bytes.NewReader(payload))
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatal(w.Body.String())
				}
			}
		})
	}
}

// TestInvokeIdentityCostsNoAllocation: the identity headers of a token
// cost the worker no allocation when the tool does not ask who calls: the
// body is read into a buffer sized from its Content-Length, the headers
// stay JSON.
func TestInvokeIdentityCostsNoAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector changes allocation counts (sync.Pool drops items at random); make allocs runs this without it")
	}
	a, _ := testAppWith(t, &Options{Stderr: io.Discard, Stdout: io.Discard, ScriptRoot: t.TempDir()})
	h := a.Handler()
	var counts [2]float64
	for i, identity := range []bool{false, true} {
		payload := identityPayload(t, identity)
		counts[i] = testing.AllocsPerRun(50, func() {
			req := httptest.NewRequest(http.MethodPost, "/greet", bytes.NewReader(payload))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			if w.Code != 200 {
				panic(w.Body.String())
			}
		})
	}
	if counts[1] > counts[0] {
		t.Errorf("an invocation with the identity headers allocates %v times, without them %v", counts[1], counts[0])
	}
}

// identityPayload is an invocation of greet as funchost sends it, with the
// identity headers of a token or without.
func identityPayload(t testing.TB, identity bool) []byte {
	principal := base64.StdEncoding.EncodeToString([]byte(`{"auth_typ":"aad","claims":[` +
		`{"typ":"aud","val":"api://3f0a6c1e-0d5b-4a57-9c3e-7b2f4b1d9e21"},` +
		`{"typ":"iss","val":"https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0"},` +
		`{"typ":"name","val":"Alex Example"},{"typ":"oid","val":"8c2b8a4e-5f0e-4a3b-9d77-0c1e2f3a4b5c"},` +
		`{"typ":"preferred_username","val":"alex@example.com"},{"typ":"scp","val":"Tools.Read Tools.Admin"},` +
		`{"typ":"sub","val":"pQ9bX2rT7mK1vZ8nL4cH6jW3yF5sD0aE"},{"typ":"tid","val":"72f988bf-86f1-41af-91ab-2d7cd011db47"}],` +
		`"name_typ":"name","role_typ":"roles"}`))
	headers := `"Accept":"application/json, text/event-stream","Content-Type":"application/json","Mcp-Protocol-Version":"2025-06-18",` +
		`"Mcp-Session-Id":"s1","User-Agent":"node"`
	ids := `,"X-Ms-Client-Principal":"` + principal + `","X-Ms-Client-Principal-Id":"8c2b8a4e-5f0e-4a3b-9d77-0c1e2f3a4b5c",` +
		`"X-Ms-Client-Principal-Idp":"aad","X-Ms-Client-Principal-Name":"alex@example.com"`
	if identity {
		headers += ids
	}
	return []byte(body(t, `{"name":"greet","arguments":{"name":"Ada","times":2},"sessionid":"s1",`+
		`"transport":{"name":"http-streamable","sessionId":"s1","properties":{"headers":{`+headers+`}}}}`, 0))
}

func TestReadBody(t *testing.T) {
	text := bytes.Repeat([]byte("0123456789"), 300)
	for _, size := range []int64{-1, 0, 10, 2999, 3000, 3001, 9000} {
		got, err := readBody(iotest.OneByteReader(bytes.NewReader(text)), size, 8000)
		if err != nil || !bytes.Equal(got, text) {
			t.Errorf("announced %d: %d bytes, %v", size, len(got), err)
		}
	}
	_, err := readBody(iotest.ErrReader(io.ErrUnexpectedEOF), 10, 100)
	if err != io.ErrUnexpectedEOF {
		t.Errorf("error %v", err)
	}
}
