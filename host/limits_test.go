package host

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hostileArguments are tools/call arguments that must be refused before
// anything is forwarded, each with the message it must get.
var hostileArguments = []struct {
	name, args, message string
}{
	{"2 MiB string", `{"city":"` + strings.Repeat("x", 2<<20) + `"}`, "Invalid params: the arguments exceed 1048576 bytes."},
	{"deep nesting", `{"city":"Oslo","deep":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`, "Invalid params: the arguments nest deeper than 64 levels."},
	{"deep objects", `{"city":"Oslo","deep":` + strings.Repeat(`{"a":`, 100) + `1` + strings.Repeat("}", 100) + `}`, "Invalid params: the arguments nest deeper than 64 levels."},
	{"many keys", `{"city":"Oslo","many":{` + manyKeys(20000) + `}}`, "Invalid params: the arguments hold more than 10000 object keys."},
	{"many small arrays", `{"city":"Oslo","many":[` + strings.Repeat(`[],`, 400000) + `[]]}`, "Invalid params: the arguments exceed 1048576 bytes."},
}

func manyKeys(n int) string {
	var sb strings.Builder
	for i := range n {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(`"k`)
		sb.WriteString(itoa(i))
		sb.WriteString(`":0`)
	}
	return sb.String()
}

func TestHostileArgumentsAreRefused(t *testing.T) {
	fw := newFakeWorker(t)
	root := weatherApp(t, `{"version":"2.0"}`)
	h, _ := newTestHost(t, root, fw.srv.URL, nil)
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()
	for _, tt := range hostileArguments {
		t.Run(tt.name, func(t *testing.T) {
			before := len(fw.requests())
			status, body := rpc(t, srv.URL, "2025-06-18", callBody(9, "get_weather", tt.args))
			assert.Equal(t, http.StatusOK, status)
			if len(body) > 2000 {
				body = body[:2000]
			}
			assert.JSONEq(t, `{"jsonrpc":"2.0","id":9,"error":{"code":-32602,"message":"`+tt.message+`"}}`, string(body))
			assert.Equal(t, before, len(fw.requests()), "nothing is forwarded to the worker")
		})
	}
	t.Run("within the bounds", func(t *testing.T) {
		status, body := rpc(t, srv.URL, "2025-06-18", callBody(10, "get_weather", `{"city":"Oslo","deep":`+strings.Repeat("[", 60)+strings.Repeat("]", 60)+`}`))
		assert.Equal(t, http.StatusOK, status)
		assert.False(t, callResult(t, body).IsError, "%s", body)
	})
}

// TestHostileArgumentsMemoryBound checks what one hostile call costs the
// host: well under the size of a few copies of its body.
func TestHostileArgumentsMemoryBound(t *testing.T) {
	fw := newFakeWorker(t)
	root := weatherApp(t, `{"version":"2.0"}`)
	h, _ := newTestHost(t, root, fw.srv.URL, nil)
	handler := h.Handler()
	for _, tt := range hostileArguments {
		t.Run(tt.name, func(t *testing.T) {
			body := callBody(9, "get_weather", tt.args)
			serve := func() int {
				req := httptest.NewRequest(http.MethodPost, MCPPath, strings.NewReader(body))
				req.Host = "127.0.0.1"
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Accept", "application/json")
				rec := httptest.NewRecorder()
				handler.ServeHTTP(rec, req)
				return rec.Code
			}
			require.Equal(t, http.StatusOK, serve()) // warm the buffer pools
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			require.Equal(t, http.StatusOK, serve())
			runtime.ReadMemStats(&after)
			allocated := after.TotalAlloc - before.TotalAlloc
			bound := uint64(10*len(body)) + 4<<20
			t.Logf("%s: body %d bytes, allocated %d bytes", tt.name, len(body), allocated)
			assert.Less(t, allocated, bound, "one hostile call allocates at most 10× its body + 4 MiB")
		})
	}
}
