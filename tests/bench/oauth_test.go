package bench

import (
	"fmt"
	"net/http"
	"os"
	"testing"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// bearerTransport adds an access token to every request.
type bearerTransport struct {
	token string
	next  *http.Transport
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func (b bearerTransport) CloseIdleConnections() { b.next.CloseIdleConnections() }

// BenchmarkToolsCallWithToken measures what access tokens cost: the same
// tools/call (get_weather on the sample) to two funchost processes, one
// without authorization and one a resource server of an OpenID provider
// running in this process, called with a valid token (the issuer's keys
// fetched once, the token's validation remembered, as for a client that
// reuses its token). Server CPU per call (funchost + worker) of the second
// over the first is the cost, goal at most 5% more.
func BenchmarkToolsCallWithToken(b *testing.B) {
	binaries(b)
	op := testutil.StartOIDC(b)
	const audience = "api://funcmcp-bench"
	plain, err := startFunchost(built.app)
	if err != nil {
		b.Fatal(err)
	}
	defer plain.stop()
	// The same environment as the plain host's, with the authorization
	// settings.
	authed, err := startFunchostEnv(built.app, append(os.Environ(),
		"FUNCMCP_AUTH_ISSUER="+op.URL,
		"FUNCMCP_AUTH_AUDIENCE="+audience,
		"WEBSITE_AUTH_PRM_DEFAULT_WITH_SCOPES="+audience+"/user_impersonation",
	))
	if err != nil {
		b.Fatal(err)
	}
	defer authed.stop()
	token := op.Token(b, testutil.Claims(op.URL, audience, "bench-user", "user_impersonation"))
	for _, c := range []int{1, 16} {
		b.Run(fmt.Sprintf("c%d", c), func(b *testing.B) {
			mk := func(name string, h *hostProc, client *http.Client) *target {
				return &target{name: name, url: h.endpoint(), body: []byte(weatherCall), client: client, check: checkToolResult, pids: h.serverPIDs}
			}
			withToken := newClient()
			withToken.Transport = bearerTransport{token: token, next: withToken.Transport.(*http.Transport)}
			targets := []*target{mk("no-auth", plain, newClient()), mk("token", authed, withToken)}
			for _, t := range targets {
				if t.headers, err = sessions(t.client, t.url, c); err != nil {
					b.Fatalf("%s: %v", t.name, err)
				}
			}
			// At c=16, chunks of 8 calls per caller rather than 25: a run
			// of 3000 calls is then 24 interleaved rounds, not 8, so that
			// both hosts see the same changes of the machine's load (the
			// ratio sought is a few percent; the load moves it more than
			// that between rounds). The calls are the same.
			chunk := 25 * c
			if c > 1 {
				chunk = 8 * c
			}
			res, load := runInterleavedChunks(b, targets, c, chunk)
			ratio := func(m map[string]*sample) float64 {
				return float64(m["token"].cpuPerCall()) / float64(m["no-auth"].cpuPerCall())
			}
			b.ReportMetric(us(res["token"].cpuPerCall()), "token-cpu-µs/call")
			b.ReportMetric(us(res["no-auth"].cpuPerCall()), "noauth-cpu-µs/call")
			record(atMost(row{what: fmt.Sprintf("tools/call server CPU per call, valid token vs no auth, c=%d", c), unit: "µs",
				ours: us(res["token"].cpuPerCall()), ratio: ratio(res), load: load, spread: spread(res, ratio),
				detail: fmt.Sprintf("(funchost + worker) with a valid access token (keys and validation cached) / the same without authorization: %.0f µs",
					us(res["no-auth"].cpuPerCall()))}, 1.05))
		})
	}
}
