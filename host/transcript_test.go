package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTranscripts runs the same JSON-RPC conversation against a host in each
// outputValidation mode and compares it with testdata/transcript_<mode>.golden.
func TestTranscripts(t *testing.T) {
	steps := []struct {
		title, version, body string
	}{
		{"initialize", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"transcript","version":"1.0"}}}`},
		{"initialized notification", "2025-06-18", `{"jsonrpc":"2.0","method":"notifications/initialized"}`},
		{"tools/list", "2025-06-18", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`},
		{"tools/call with valid output", "2025-06-18", callBody(3, "get_weather", `{"city":"Oslo"}`)},
		{"tools/call with output that breaks the schema", "2025-06-18", callBody(4, "bad_weather", `{"city":"Oslo"}`)},
		{"tools/call of an unknown tool", "2025-06-18", callBody(5, "no_such_tool", `{}`)},
		{"tools/call, tool name in another case: unknown (exact lookup)", "2025-06-18", callBody(6, "GET_WEATHER", `{"city":"Bergen"}`)},
		{"tools/call with a missing argument on 2025-06-18", "2025-06-18", callBody(7, "get_weather", `{}`)},
		{"tools/call with a null argument on 2025-11-25", "2025-11-25", callBody(8, "get_weather", `{"city":null}`)},
		{"tools/call of a failing worker function", "2025-06-18", callBody(9, "fail500", "")},
	}
	for _, mode := range []OutputValidation{ValidationStrict, ValidationWarn, ValidationOff} {
		t.Run(string(mode), func(t *testing.T) {
			fw := newFakeWorker(t)
			root := weatherApp(t, `{"version":"2.0","extensions":{"mcp":{"serverName":"transcript server","serverVersion":"9.9.9","instructions":"Test only.","outputValidation":"`+string(mode)+`"}}}`)
			h, logs := newTestHost(t, root, fw.srv.URL, nil)
			srv := httptest.NewServer(h.Handler())
			defer srv.Close()

			var out bytes.Buffer
			for _, s := range steps {
				status, body := rpc(t, srv.URL, s.version, s.body)
				fmt.Fprintf(&out, "### %s", s.title)
				if s.version != "" {
					fmt.Fprintf(&out, " (MCP-Protocol-Version: %s)", s.version)
				}
				fmt.Fprintf(&out, "\n--> %s\n<-- %d", s.body, status)
				if len(bytes.TrimSpace(body)) > 0 {
					var pretty bytes.Buffer
					require.NoError(t, json.Indent(&pretty, body, "", "  "), string(body))
					fmt.Fprintf(&out, "\n%s", pretty.String())
				}
				out.WriteString("\n\n")
			}
			goldenCompare(t, "transcript_"+string(mode)+".golden", out.Bytes())

			// The log says what was wrong with the output, per mode, as a
			// warning in both (the app's bug; the server goes on).
			const problem = `Output of tool 'bad_weather' does not match its output schema: at '/temp' (/properties/temp/type): got string, want number`
			switch mode {
			case ValidationStrict:
				assert.Contains(t, logs.String(), "level=WARN msg=\""+problem+"\"")
			case ValidationWarn:
				assert.Contains(t, logs.String(), "level=WARN msg=\""+problem+" (delivered as is: outputValidation is warn)\"")
			case ValidationOff:
				assert.NotContains(t, logs.String(), "does not match")
			}
			assert.Contains(t, logs.String(), `invoking tool 'fail500' failed: POST /fail500: the worker answered 500 Internal Server Error (body: \"boom\")`)
			assert.Contains(t, logs.String(), `level=INFO msg="handled get_weather" function=get_weather`)

			// Missing arguments and unknown tools never reach the worker.
			var called []string
			for _, r := range fw.requests() {
				called = append(called, r.Function)
			}
			assert.Equal(t, []string{"get_weather", "bad_weather", "fail500"}, called)
		})
	}
}

// TestInvocationRequest checks what the worker receives.
func TestInvocationRequest(t *testing.T) {
	fw := newFakeWorker(t)
	root := weatherApp(t, `{"version":"2.0"}`)
	h, _ := newTestHost(t, root, fw.srv.URL, nil)
	srv := httptest.NewServer(h.Handler())
	defer srv.Close()

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"0.1"}}}`
	sessionID := initSession(t, srv.URL, init)
	for i := 0; i < 2; i++ {
		status, body := rpcSession(t, srv.URL, sessionID, callBody(2, "get_weather", `{"city":"Oslo","days":3,"opts":{"a":[1]}}`))
		require.Equal(t, 200, status, string(body))
	}
	reqs := fw.requests()
	require.Len(t, reqs, 2)
	r := reqs[0]
	assert.Equal(t, "get_weather", r.Function)
	assert.Equal(t, "application/json; charset=utf-8", r.Header.Get("Content-Type"))
	assert.Equal(t, "Azure-Functions-Host/"+Version, r.Header.Get("User-Agent"))
	assert.Equal(t, Version, r.Header.Get("X-Azure-Functions-HostVersion"))
	assert.Len(t, r.Header.Get("X-Azure-Functions-InvocationId"), 36)
	assert.NotEqual(t, r.Header.Get("X-Azure-Functions-InvocationId"), reqs[1].Header.Get("X-Azure-Functions-InvocationId"), "a new id per call")

	var body struct {
		Data     map[string]json.RawMessage
		Metadata struct {
			Mcptoolargs  map[string]string `json:"mcptoolargs"`
			Mcpsessionid string            `json:"mcpsessionid"`
			Sys          struct{ MethodName, UtcNow, RandGuid string }
		}
	}
	require.NoError(t, json.Unmarshal(r.Body, &body))
	require.Contains(t, body.Data, "context")
	ctxJSON := body.Data["context"]
	require.Equal(t, byte('{'), ctxJSON[0], "the context is sent as an object")
	var tc struct {
		Name       string                     `json:"name"`
		Arguments  map[string]json.RawMessage `json:"arguments"`
		SessionID  string                     `json:"sessionid"`
		ClientInfo map[string]string          `json:"clientinfo"`
		Transport  struct {
			Name       string `json:"name"`
			SessionID  string `json:"sessionId"`
			Properties struct {
				Headers map[string]string `json:"headers"`
			} `json:"properties"`
		} `json:"transport"`
	}
	require.NoError(t, json.Unmarshal(ctxJSON, &tc))
	assert.Equal(t, "get_weather", tc.Name)
	assert.JSONEq(t, `"Oslo"`, string(tc.Arguments["city"]))
	assert.JSONEq(t, `{"a":[1]}`, string(tc.Arguments["opts"]))
	assert.Equal(t, sessionID, tc.SessionID)
	assert.Equal(t, map[string]string{"name": "probe", "version": "0.1"}, tc.ClientInfo)
	assert.Equal(t, "http-streamable", tc.Transport.Name)
	assert.Equal(t, sessionID, tc.Transport.SessionID)
	assert.Equal(t, "application/json,text/event-stream", tc.Transport.Properties.Headers["Accept"], "multi-valued headers joined with ','")
	assert.Equal(t, sessionID, tc.Transport.Properties.Headers["Mcp-Session-Id"])
	assert.NotContains(t, tc.Transport.Properties.Headers, "X-Functions-Key", "the function key is not forwarded")
	assert.NotContains(t, string(r.Body), testKey, "the function key is not forwarded")

	assert.Equal(t, map[string]string{"city": "Oslo", "days": "3", "opts": `{"a":[1]}`}, body.Metadata.Mcptoolargs)
	assert.Equal(t, sessionID, body.Metadata.Mcpsessionid)
	assert.Equal(t, "get_weather", body.Metadata.Sys.MethodName)
	assert.NotEmpty(t, body.Metadata.Sys.UtcNow)
	assert.Len(t, body.Metadata.Sys.RandGuid, 36)
}

func initSession(t *testing.T, url, body string) string {
	t.Helper()
	req := httptest.NewRequest("POST", url+MCPPath, strings.NewReader(body))
	req.RequestURI = ""
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("X-Functions-Key", testKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	id := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, id)
	return id
}

func rpcSession(t *testing.T, url, session, body string) (int, []byte) {
	t.Helper()
	req := httptest.NewRequest("POST", url+MCPPath, strings.NewReader(body))
	req.RequestURI = ""
	req.Header.Set("Content-Type", "application/json")
	req.Header.Add("Accept", "application/json")
	req.Header.Add("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("X-Functions-Key", testKey)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(resp.Body)
	return resp.StatusCode, sseData(buf.Bytes())
}
