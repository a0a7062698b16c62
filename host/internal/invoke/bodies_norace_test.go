//go:build !race

package invoke

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBodyAllocationsAreUsedAgain: a tool call's body, once sent over the
// hop and answered, is given back for the next call (the race detector
// makes sync.Pool drop buffers at random: make allocs runs it without);
// the worker got it whole.
func TestBodyAllocationsAreUsedAgain(t *testing.T) {
	var got string
	srv, _ := hopServer(t, func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		got = string(data)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"Outputs":{},"Logs":[],"ReturnValue":"ok"}`)
	})
	inv := NewClient(&Options{HostVersion: "v", MaxCalls: 1})
	inv.SetWorker(srv.URL)
	f := &Function{Name: "f", DataKey: "context", Tool: "f"}
	call := &Call{Arguments: map[string]json.RawMessage{"city": json.RawMessage(`"Lima"`)}}
	in, err := inv.ToolRequest(f, call, time.Now())
	require.NoError(t, err)
	require.True(t, in.pooled)
	sent := string(in.body)
	first := &in.body[0]
	_, err = inv.Send(t.Context(), f, "id", in, nil)
	require.NoError(t, err)
	assert.Equal(t, sent, got)
	assert.Nil(t, in.body, "the request lets its body go")
	next := bodies.Get(bodySize(f, call))
	assert.Same(t, first, &next[:1][0], "the body is used again")
}

// TestHeldBodyAllocationsAreNotUsedAgain: net/http may still be writing a
// body after its answer came, and a handler in process may keep its
// request, so a body sent through the pipeline (a worker that is not plain
// http) or to a handler in process is left to the collector.
func TestHeldBodyAllocationsAreNotUsedAgain(t *testing.T) {
	b := append(bodies.Get(512), "body"...)
	r := &Request{body: b, pooled: true, held: true}
	r.release()
	next := bodies.Get(512)
	assert.NotSame(t, &b[0], &next[:1][0])
}
