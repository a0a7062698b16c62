package tests

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/metadata"
)

// startHandler starts an app's handler process as the Azure Functions host
// does (FUNCTIONS_CUSTOMHANDLER_PORT, FUNCTIONS_APP_ROOT_PATH, the app
// folder as working directory), waits until GET / answers and returns its
// base URL. The process is stopped at the end of the test.
func startHandler(t *testing.T, app string) string {
	t.Helper()
	port := strconv.Itoa(testutil.FreePort(t))

	cmd := exec.Command(filepath.Join(app, "handler"))
	cmd.Dir = app
	cmd.Env = append(os.Environ(), metadata.EnvCustomHandlerPort+"="+port, metadata.EnvAppRootPath+"="+app)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // the process this test started, by its pid
		_ = cmd.Wait()
	})
	base := "http://127.0.0.1:" + port
	deadline := time.Now().Add(20 * time.Second)
	probe := &http.Client{Timeout: time.Second} // a handler that accepts and hangs must not hang the test
	for {
		resp, err := probe.Get(base + "/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the handler did not answer GET / within 20s; its output:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// invokeAsFunctionsHost posts a tool call as the Azure Functions host does
// and returns the result as that host decodes it (it checks nothing) and the
// invocation's Logs.
func invokeAsFunctionsHost(t *testing.T, base, function, arguments string) (*metadata.CallToolResult, []string) {
	t.Helper()
	reply := testutil.InvokeAsFunctionsHost(t, base, function, arguments)
	d, err := binding.DecodeReturnValue(reply.ReturnValue, true)
	require.NoError(t, err)
	return d.Result, reply.Logs
}

func resultText(res *metadata.CallToolResult) string {
	var parts []string
	for _, b := range res.Content {
		var block struct{ Text string }
		_ = json.Unmarshal(b, &block)
		parts = append(parts, block.Text)
	}
	return strings.Join(parts, "\n")
}

// TestBrokenAppUnderTheFunctionsHostProtocol runs the broken test app's
// real handler process with no funchost in front: its bad_output breaks its
// output schema, and the worker itself turns that into an isError result
// (host.json says strict), or delivers it with a logged warning once
// host.json says warn. Before the worker checked its output, this call came
// back as a success under the Azure Functions host.
func TestBrokenAppUnderTheFunctionsHostProtocol(t *testing.T) {
	t.Parallel()
	app := broken(t)
	base := startHandler(t, app)

	res, logs := invokeAsFunctionsHost(t, base, "bad_output", "{}")
	assert.True(t, res.IsError, "%s", resultText(res))
	assert.Nil(t, res.StructuredContent)
	assert.Contains(t, resultText(res), "Output of tool 'bad_output' does not match its output schema: at '/count'")
	assert.Contains(t, strings.Join(logs, "\n"), "does not match its output schema")

	res, _ = invokeAsFunctionsHost(t, base, "echo", `{"text":"hi"}`)
	require.False(t, res.IsError, "%s", resultText(res))
	assert.JSONEq(t, `{"echo":"HI","length":2}`, string(res.StructuredContent))

	t.Run("host.json says warn", func(t *testing.T) {
		warnApp := copyApp(t, app)
		hostJSON := strings.Replace(brokenHostJSON, `"outputValidation": "strict"`, `"outputValidation": "warn"`, 1)
		require.NotEqual(t, brokenHostJSON, hostJSON)
		require.NoError(t, os.WriteFile(filepath.Join(warnApp, "host.json"), []byte(hostJSON), 0o644))
		base := startHandler(t, warnApp)
		res, logs := invokeAsFunctionsHost(t, base, "bad_output", "{}")
		assert.False(t, res.IsError, "%s", resultText(res))
		assert.JSONEq(t, `{"count":"three","label":"three"}`, string(res.StructuredContent))
		assert.Contains(t, strings.Join(logs, "\n"), "(delivered as is: outputValidation is warn)")
	})
}

// TestSampleRefusesBadArgumentsUnderTheFunctionsHostProtocol calls the
// sample's real handler as the Azure Functions host does: arguments that
// break a tool's input schema never reach its handler (inputValidation is
// strict by default), and the isError result names the tool and the JSON
// pointer of each problem. The Functions host itself checks only that
// required arguments are present.
func TestSampleRefusesBadArgumentsUnderTheFunctionsHostProtocol(t *testing.T) {
	t.Parallel()
	base := startHandler(t, sample(t))
	for _, tc := range []struct {
		function, arguments, message string
	}{
		{"get_weather", `{"city":"Oslo","units":"kelvin"}`,
			"Input of tool 'get_weather' does not match its input schema: at '/units' (/properties/units/enum): value must be one of 'metric', 'imperial'"},
		{"get_weather", `{"city":7}`,
			"Input of tool 'get_weather' does not match its input schema: at '/city' (/properties/city/type): got number, want string"},
		{"primes", `{"to":10,"bogus":1}`,
			"Input of tool 'primes' does not match its input schema: at '' (/additionalProperties): additional properties 'bogus' not allowed"},
		{"mortgage_payment", `{"principal":1000,"annual_rate_percent":"5","years":10}`,
			"Input of tool 'mortgage_payment' does not match its input schema: at '/annual_rate_percent' (/properties/annual_rate_percent/type): got string, want number"},
	} {
		res, logs := invokeAsFunctionsHost(t, base, tc.function, tc.arguments)
		assert.True(t, res.IsError, "%s %s: %s", tc.function, tc.arguments, resultText(res))
		assert.Equal(t, tc.message, resultText(res))
		assert.Nil(t, res.StructuredContent)
		assert.Contains(t, strings.Join(logs, "\n"), tc.message)
	}
	res, _ := invokeAsFunctionsHost(t, base, "get_weather", `{"city":"Oslo","units":"imperial","days":2}`)
	assert.False(t, res.IsError, "good arguments still work: %s", resultText(res))
}
