package tests

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestTelemetrySwitchIsHostJSON: under funchost, host.json telemetryMode is
// the one switch of both processes. The sample without telemetryMode, with
// OTEL_EXPORTER_OTLP_ENDPOINT naming a real backend (and
// OTEL_SDK_DISABLED=false, which funchost overrides for the worker), serves
// a tools/call and stops (the worker flushes what it has at exit); the
// backend receives nothing from either process, waited for well past their
// flush intervals. The start line and /admin/host/status say telemetry is
// off and the worker's exporters disabled. Then the sample with
// telemetryMode OpenTelemetry and the same settings: the same backend
// receives the call's trace from both processes, and the start line and
// the status say on, exporting to the backend from host and worker.
func TestTelemetrySwitchIsHostJSON(t *testing.T) {
	be := startOTelBackend(t)
	env := []string{
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + be.url,
		"OTEL_EXPORTER_OTLP_HEADERS=api-key=do-not-print-me",
		"OTEL_SDK_DISABLED=false",
		"OTEL_BSP_SCHEDULE_DELAY=50",
		"OTEL_METRIC_EXPORT_INTERVAL=200",
	}
	const offTrace, onTrace = "d1f92f3577b34da6a3ce929d0e0e4710", "d1f92f3577b34da6a3ce929d0e0e4711"
	call := func(h *host, trace string) {
		t.Helper()
		session, _ := postMCP(t, h.endpoint, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		_, out := postMCP(t, h.endpoint, session, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"to_roman","arguments":{"number":2026},"_meta":{"traceparent":"`+traceparent(trace)+`"}}}`)
		require.Contains(t, out, "MMXXVI")
	}

	off := startHostEnv(t, sample(t), env)
	call(off, offTrace)
	st := off.status(t)
	off.stop(t)
	// Forty of the worker's span flushes, ten metric exports.
	time.Sleep(2 * time.Second)
	spans, metrics := be.read(t)
	var got []string
	for _, s := range spans {
		got = append(got, s.traceID+" "+s.name+" pid "+s.pid)
	}
	require.Empty(t, got, "spans exported with host.json telemetry off")
	require.Empty(t, metrics, "metrics exported with host.json telemetry off")
	require.Contains(t, off.console.String(),
		"Telemetry: off (host.json has no telemetryMode); worker: exporting nothing (funchost starts it with OTEL_SDK_DISABLED=true)\n")
	tel, ok := st["telemetry"].(map[string]any)
	require.True(t, ok, "status: %v", st)
	require.Equal(t, false, tel["on"], "status: %v", st)
	require.Equal(t, map[string]any{"reason": "funchost starts it with OTEL_SDK_DISABLED=true"}, tel["worker"], "status: %v", st)

	on := startHostEnv(t, telemetrySample(t), env)
	call(on, onTrace)
	be.waitFor(t, "the call's spans from both processes", func(spans []recvSpan, _ map[string]string) bool {
		_, ok := chainOf(spans, onTrace, "tools/call to_roman", "invoke to_roman", "execute_tool to_roman", "roman")
		return ok
	})
	require.Contains(t, on.console.String(),
		"Telemetry: on (OpenTelemetry), exporting traces and metrics to "+be.url+" (host and worker)\n")
	require.NotContains(t, on.console.String(), "do-not-print-me")
	st = on.status(t)
	tel, ok = st["telemetry"].(map[string]any)
	require.True(t, ok, "status: %v", st)
	require.Equal(t, true, tel["on"])
	require.Equal(t, "OpenTelemetry", tel["mode"])
	require.Equal(t, map[string]any{"traces": be.url, "metrics": be.url}, tel["host"])
	require.Equal(t, tel["host"], tel["worker"])
	require.NotContains(t, tel["text"], "do-not-print-me")
}
