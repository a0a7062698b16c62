package host

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/config"
)

// statusTelemetry reads the "telemetry" member of GET /admin/host/status.
func statusTelemetry(t *testing.T, h *Host) (map[string]any, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, StatusPath, nil)
	req.Host = "127.0.0.1"
	req.Header.Set("x-functions-key", testKey)
	rec := httptest.NewRecorder()
	h.Handler().ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var st struct{ Telemetry map[string]any }
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &st), rec.Body.String())
	return st.Telemetry, rec.Body.String()
}

// lastValue is the value of the last setting named key ("" when none): the
// one the worker's environment keeps.
func lastValue(settings []config.Setting, key string) string {
	v := ""
	for _, s := range settings {
		if s.Key == key {
			v = s.Value
		}
	}
	return v
}

// TestTelemetryOffDisablesTheWorker: with no telemetryMode in host.json,
// the worker is started with OTEL_SDK_DISABLED=true after whatever the
// environment and local.settings.json say (an endpoint, and
// OTEL_SDK_DISABLED=false), and the status says so.
func TestTelemetryOffDisablesTheWorker(t *testing.T) {
	root := weatherApp(t, `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"handler"}}}`)
	writeFile(t, root, LocalSettingsFile, `{"IsEncrypted":false,"Values":{"OTEL_SDK_DISABLED":"false","OTEL_EXPORTER_OTLP_ENDPOINT":"http://127.0.0.1:4318"}}`)
	h, _ := newTestHost(t, root, "", &Options{Environ: []string{"OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318", "OTEL_SDK_DISABLED=false"}})
	h.secrets.Keys = nil
	assert.Equal(t, "true", lastValue(h.worker.Values(), "OTEL_SDK_DISABLED"))

	tel, _ := statusTelemetry(t, h)
	assert.Equal(t, map[string]any{
		"on":     false,
		"host":   map[string]any{"reason": "host.json has no telemetryMode"},
		"worker": map[string]any{"reason": "funchost starts it with OTEL_SDK_DISABLED=true"},
		"text":   "off (host.json has no telemetryMode); worker: exporting nothing (funchost starts it with OTEL_SDK_DISABLED=true)",
	}, tel)
}

// TestTelemetryOnStartLineAndStatus: with telemetryMode OpenTelemetry the
// worker's OTEL_* are left as they are, funchost prints at start where the
// host and the worker export, and the status carries the same; neither
// shows the export headers or the endpoint's credentials.
func TestTelemetryOnStartLineAndStatus(t *testing.T) {
	sink := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(sink.Close)
	secretURL := strings.Replace(sink.URL, "http://", "http://user:url-secret@", 1)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", secretURL)
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "api-key=header-secret")
	t.Setenv("OTEL_SDK_DISABLED", "")
	hostJSON := `{"version":"2.0","telemetryMode":"OpenTelemetry","customHandler":{"description":{"defaultExecutablePath":"handler"}}}`

	// The worker funchost starts gets the same environment: one endpoint.
	h, _ := newTestHost(t, weatherApp(t, hostJSON), "", nil)
	h.secrets.Keys = nil
	assert.Empty(t, lastValue(h.worker.Values(), "OTEL_SDK_DISABLED"))
	tel, body := statusTelemetry(t, h)
	assert.Equal(t, map[string]any{
		"on":     true,
		"mode":   "OpenTelemetry",
		"host":   map[string]any{"traces": sink.URL, "metrics": sink.URL},
		"worker": map[string]any{"traces": sink.URL, "metrics": sink.URL},
		"text":   "on (OpenTelemetry), exporting traces and metrics to " + sink.URL + " (host and worker)",
	}, tel)
	assert.NotContains(t, body, "secret")

	// A worker funchost does not start: its own environment decides.
	fw := newFakeWorker(t)
	out := &syncBuffer{}
	h, _ = newTestHost(t, weatherApp(t, hostJSON), fw.srv.URL, &Options{Addr: "127.0.0.1:0", Output: out})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.Run(ctx) }()
	select {
	case <-h.Ready():
	case err := <-done:
		t.Fatalf("Run returned: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("not ready within 20s")
	}
	cancel()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return within 20s")
	}
	assert.Contains(t, out.String(), "\nTelemetry: on (OpenTelemetry); host: exporting traces and metrics to "+sink.URL+
		"; worker: exporting nothing (not started by funchost: its own environment decides)\n")
	assert.NotContains(t, out.String(), "secret")
}
