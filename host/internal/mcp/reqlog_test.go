package mcp

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestRequestLog: at debug level every request is one line with its
// method, revision, name, duration and outcome; at info there is none.
func TestRequestLog(t *testing.T) {
	logs := &syncBuffer{}
	s := startServer(t, &Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	hdr := map[string]string{headerProtocolVersion: "2025-11-25"}
	s.post(t, rpc(1, methodToolsCall, map[string]any{"name": "add", "arguments": map[string]any{"a": 1, "b": 2}}), hdr)
	s.post(t, rpc(2, methodToolsCall, map[string]any{"name": "echo", "arguments": map[string]any{"text": 5}}), hdr)
	s.post(t, rpc(3, methodToolsCall, map[string]any{"name": "nope"}), hdr)
	s.post(t, rpc(4, methodToolsList, nil), map[string]string{headerProtocolVersion: "1999-01-01"})
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	var got []string
	for _, l := range lines {
		if strings.Contains(l, "level=DEBUG") && strings.Contains(l, `msg="mcp `) {
			got = append(got, l)
		}
	}
	if assert.Len(t, got, 4, logs.String()) {
		assert.Contains(t, got[0], `method=tools/call revision=2025-11-25 name=add duration=`)
		assert.Contains(t, got[0], "outcome=ok")
		assert.Contains(t, got[1], `name=echo`)
		assert.Contains(t, got[1], "outcome=isError")
		assert.Contains(t, got[2], `outcome="error -32602"`)
		assert.Contains(t, got[3], `method=tools/list`)
		assert.Contains(t, got[3], `outcome="refused 400"`)
	}

	quiet := &syncBuffer{}
	q := startServer(t, &Options{Logger: slog.New(slog.NewTextHandler(quiet, nil))})
	q.post(t, rpc(1, methodToolsList, nil), hdr)
	assert.NotContains(t, quiet.String(), "mcp tools/list")
}
