package telemetry

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// env is a getenv over a map.
func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestExportsFollowTheSDKsVariables: each signal goes to its own endpoint
// when one is named, else to OTEL_EXPORTER_OTLP_ENDPOINT, else to the
// SDK's default; "none" exports nothing of that signal; an endpoint is
// shown without its credentials, query and fragment, and a value that is
// no URL is not shown.
func TestExportsFollowTheSDKsVariables(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		want Exports
	}{
		{"the base endpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"},
			Exports{Traces: "http://127.0.0.1:4318", Metrics: "http://127.0.0.1:4318"}},
		{"a signal's own endpoint wins", map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":        "http://127.0.0.1:4318",
			"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://traces.example/v1/traces",
		}, Exports{Traces: "https://traces.example/v1/traces", Metrics: "http://127.0.0.1:4318"}},
		{"none", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_METRICS_EXPORTER": "none"},
			Exports{Traces: "http://127.0.0.1:4318"}},
		{"the default", map[string]string{}, Exports{Traces: defaultEndpoint, Metrics: defaultEndpoint}},
		{"no secret", map[string]string{
			"OTEL_EXPORTER_OTLP_ENDPOINT":         "https://user:pass-secret@otlp.example:4318/base?key=query-secret#frag-secret",
			"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "not a url secret",
			"OTEL_EXPORTER_OTLP_HEADERS":          "api-key=header-secret",
		}, Exports{Traces: "https://otlp.example:4318/base", Metrics: "(not a URL)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, HostExports(env(tt.env)))
		})
	}
}

// TestWorkerExports: a worker with worker/otel exports only when its
// environment names an endpoint and OTEL_SDK_DISABLED is not "true".
func TestWorkerExports(t *testing.T) {
	const url = "http://127.0.0.1:4318"
	assert.Equal(t, Exports{Traces: url, Metrics: url}, WorkerExports(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": url})))
	assert.Equal(t, Exports{Traces: url, Metrics: defaultEndpoint}, WorkerExports(env(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": url})))
	assert.Equal(t, Exports{Reason: "OTEL_SDK_DISABLED=true"},
		WorkerExports(env(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": url, "OTEL_SDK_DISABLED": "TRUE"})))
	assert.Equal(t, Exports{Reason: "no OTEL_EXPORTER_OTLP_ENDPOINT in its environment"}, WorkerExports(env(nil)))
}

// TestSummaryText: the sentence funchost prints at start and the status
// carries, on and off.
func TestSummaryText(t *testing.T) {
	const url = "http://127.0.0.1:4318"
	both := Exports{Traces: url, Metrics: url}
	disabled := Exports{Reason: "funchost starts it with OTEL_SDK_DISABLED=true"}
	for _, tt := range []struct {
		name, mode   string
		on           bool
		host, worker Exports
		want         string
	}{
		{"on, the same everywhere", "OpenTelemetry", true, both, both,
			"on (OpenTelemetry), exporting traces and metrics to http://127.0.0.1:4318 (host and worker)"},
		{"on, the worker elsewhere", "openTelemetry", true, both, Exports{Traces: "http://w:1", Metrics: defaultEndpoint},
			"on (openTelemetry); host: exporting traces and metrics to http://127.0.0.1:4318; worker: exporting traces to http://w:1 and metrics to localhost:4318 (the default)"},
		{"on, the worker silent", "OpenTelemetry", true, Exports{Traces: url}, Exports{Reason: "no OTEL_EXPORTER_OTLP_ENDPOINT in its environment"},
			"on (OpenTelemetry); host: exporting traces to http://127.0.0.1:4318 (metrics: none); worker: exporting nothing (no OTEL_EXPORTER_OTLP_ENDPOINT in its environment)"},
		{"off: no telemetryMode", "", false, both, disabled,
			"off (host.json has no telemetryMode); worker: exporting nothing (funchost starts it with OTEL_SDK_DISABLED=true)"},
		{"off: another telemetryMode", "default", false, both, disabled,
			`off (host.json telemetryMode is "default", not OpenTelemetry); worker: exporting nothing (funchost starts it with OTEL_SDK_DISABLED=true)`},
		{"off: the SDK disabled", "OpenTelemetry", false, both, disabled,
			"off (OTEL_SDK_DISABLED=true); worker: exporting nothing (funchost starts it with OTEL_SDK_DISABLED=true)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Summarize(tt.mode, tt.on, tt.host, tt.worker).Text)
		})
	}
}

// TestSummaryJSON: the "telemetry" member of /admin/host/status, on as
// docs/telemetry.md shows it (testdata/summary_on.json); off, the host's
// endpoints are not shown (it exports nothing), its reason is.
func TestSummaryJSON(t *testing.T) {
	const url = "http://127.0.0.1:4318"
	both := Exports{Traces: url, Metrics: url}
	data, err := json.MarshalIndent(Summarize("OpenTelemetry", true, both, both), "", "  ")
	require.NoError(t, err)
	golden, err := os.ReadFile(filepath.Join("testdata", "summary_on.json"))
	require.NoError(t, err)
	assert.Equal(t, string(golden), string(data)+"\n")
	data, err = json.Marshal(Summarize("", false, both, Exports{Reason: "r"}))
	require.NoError(t, err)
	assert.JSONEq(t, `{"on":false,"host":{"reason":"host.json has no telemetryMode"},"worker":{"reason":"r"},
		"text":"off (host.json has no telemetryMode); worker: exporting nothing (r)"}`, string(data))
}
