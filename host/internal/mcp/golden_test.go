package mcp

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// TestTranscriptGolden records a whole client conversation, wire exact:
// status, the headers that matter and the body of every exchange.
func TestTranscriptGolden(t *testing.T) {
	s := startServer(t, &Options{ServerInfo: Implementation{Name: "golden", Version: "1.2.3"}, Instructions: "Tools for <tests> & docs."})
	steps := []struct {
		accept, session, version, body string
	}{
		{acceptBoth, "", "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"golden-client","version":"0.1"}}}`},
		{acceptBoth, "$token", "2025-06-18", `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{acceptBoth, "$token", "2025-06-18", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		{"application/json", "$token", "2025-06-18", `{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"add","arguments":{"a":1.5,"b":2}}}`},
		{acceptBoth, "$token", "2025-06-18", `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"<hello> & \"bye\"\n"}}}`},
		{acceptBoth, "$token", "2025-06-18", `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"missing"}}`},
		{acceptBoth, "$token", "2025-06-18", `{"jsonrpc":"2.0","id":5,"method":"prompts/list"}`},
		{acceptBoth, "$token", "2025-06-18", `{"jsonrpc":"2.0","id":6,"method":"ping"}`},
		{acceptBoth, "$token", "2099-01-01", `{"jsonrpc":"2.0","id":7,"method":"ping"}`},
		{acceptBoth, "bad", "", `{"jsonrpc":"2.0","id":8,"method":"ping"}`},
		{"text/html", "", "", `{"jsonrpc":"2.0","id":9,"method":"ping"}`},
	}
	var out strings.Builder
	token := ""
	for i, st := range steps {
		headers := map[string]string{"Accept": st.accept, "MCP-Protocol-Version": st.version}
		shown := st.session
		switch st.session {
		case "$token":
			headers["Mcp-Session-Id"] = token
		default:
			headers["Mcp-Session-Id"] = st.session
		}
		r := s.post(t, st.body, headers)
		if i == 0 {
			token = r.header.Get("Mcp-Session-Id")
			require.NotEmpty(t, token)
		}
		fmt.Fprintf(&out, "### POST Accept: %s | Mcp-Session-Id: %s | MCP-Protocol-Version: %s\n%s\n", st.accept, shown, st.version, st.body)
		fmt.Fprintf(&out, "--- %d Content-Type: %s", r.status, r.header.Get("Content-Type"))
		if sid := r.header.Get("Mcp-Session-Id"); sid != "" {
			out.WriteString(" | Mcp-Session-Id: $token")
		}
		fmt.Fprintf(&out, "\n%s\n\n", strings.TrimRight(r.body, "\n"))
	}

	path := filepath.Join("testdata", "transcript.golden")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(out.String()), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run with -update to create %s", path)
	assert.Equal(t, string(want), out.String())
}
