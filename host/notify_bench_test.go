package host

import (
	"net/http"
	"strconv"
	"testing"

	"github.com/funcmcp/funcmcp/metadata"
)

// BenchmarkToolsCallProgress_StubWorker measures a tools/call over HTTP
// through the MCP endpoint to an httptest worker that, per call, sends
// notifications progress notifications over the host's channel (each a
// loopback POST) before it answers; the client reads them all on the SSE
// stream. It leaves out the worker SDK and a real worker process. Compare
// the sub-benchmarks: the difference over 10 is the cost of one
// notification, worker POST to client event.
func BenchmarkToolsCallProgress_StubWorker(b *testing.B) {
	for _, n := range []int{0, 10} {
		b.Run(map[int]string{0: "none", 10: "10_notifications"}[n], func(b *testing.B) {
			_, srv, nw := notifyHost(b)
			nw.script = func(t testing.TB, offer http.Header) {
				target, token := offer.Get(metadata.HeaderNotifyURL), offer.Get(metadata.HeaderNotifyToken)
				for i := 1; i <= n; i++ {
					if status := postNotification(t, target, token, `{"type":"progress","progress":`+strconv.Itoa(i)+`,"total":10}`); status != http.StatusNoContent {
						t.Errorf("notification refused: %d", status) // the worker's goroutine: no Fatal
						return
					}
				}
			}
			meta := ""
			if n > 0 {
				meta = `,"_meta":{"progressToken":"b"}`
			}
			b.ReportAllocs()
			for b.Loop() {
				if events := callStream(b, srv, meta, nil); len(events) != n+1 {
					b.Fatalf("got %d events, want %d", len(events), n+1)
				}
			}
		})
	}
}
