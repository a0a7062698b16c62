package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// telemetryApp is the sample app folder with "telemetryMode":
// "OpenTelemetry" in its host.json.
func telemetryApp() (string, error) {
	dir := filepath.Join(workDir, "sample-telemetry")
	if err := writeAppFolder(dir); err != nil {
		return "", err
	}
	file := filepath.Join(dir, "host.json")
	data, err := os.ReadFile(file)
	if err != nil {
		return "", err
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return "", err
	}
	doc["telemetryMode"] = "OpenTelemetry"
	if data, err = json.Marshal(doc); err != nil {
		return "", err
	}
	if err := os.WriteFile(file, data, 0o644); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), buildTimeout)
	defer cancel()
	if out, err := exec.CommandContext(ctx, built.handler, "emit-metadata", dir).CombinedOutput(); err != nil {
		return "", fmt.Errorf("emit-metadata: %w\n%s", err, out)
	}
	return dir, nil
}

// telemetryHosts are the two hosts of BenchmarkToolsCallTelemetry, started
// once per run and stopped with the shared servers.
var telemetryHosts struct {
	once    sync.Once
	err     error
	off, on *hostProc
	// unexported makes and ends the same spans as on but exports none
	// (OTEL_TRACES_EXPORTER=none): what is left of on's cost without the
	// SDK's OTLP exporter.
	unexported *hostProc
}

// startTelemetryHosts starts the sample twice: telemetry off, and on
// with every call sampled, exporting to a local receiver that drops what
// it gets.
func startTelemetryHosts() error {
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK) // an empty Export…ServiceResponse
	}))
	shared.procs = append(shared.procs, closer{recv.Close})
	app, err := telemetryApp()
	if err != nil {
		return err
	}
	if telemetryHosts.off, err = startFunchost(built.app); err != nil {
		return err
	}
	shared.procs = append(shared.procs, telemetryHosts.off)
	env := append(os.Environ(),
		"OTEL_EXPORTER_OTLP_ENDPOINT="+recv.URL,
		"OTEL_TRACES_SAMPLER=always_on",
		"OTEL_METRIC_EXPORT_INTERVAL=1000")
	if telemetryHosts.on, err = startFunchostEnv(app, env); err != nil {
		return err
	}
	shared.procs = append(shared.procs, telemetryHosts.on)
	if telemetryHosts.unexported, err = startFunchostEnv(app, append(env[:len(env):len(env)], "OTEL_TRACES_EXPORTER=none")); err != nil {
		return err
	}
	shared.procs = append(shared.procs, telemetryHosts.unexported)
	return nil
}

// closer makes a func a stoppable thing of shared.procs.
type closer struct{ f func() }

func (c closer) stop() { c.f() }

// BenchmarkToolsCallTelemetry compares the server CPU of a tools/call
// (funchost + the sample worker) with telemetry off, as every other
// benchmark runs, and on: telemetryMode OpenTelemetry, every call sampled
// (always_on), spans and metrics exported over OTLP/HTTP to a local
// receiver that accepts and drops them (its CPU is not counted). A third
// host is on with the traces exporter "none": the same spans, started,
// ended and handed to no exporter, and the same metrics, exported; its row
// splits on's cost into the SDK's OTLP trace export and the rest. The
// hosts run side by side and are called interleaved.
func BenchmarkToolsCallTelemetry(b *testing.B) {
	binaries(b)
	telemetryHosts.once.Do(func() { telemetryHosts.err = startTelemetryHosts() })
	if telemetryHosts.err != nil {
		b.Fatal(telemetryHosts.err)
	}
	off, on, unexported := telemetryHosts.off, telemetryHosts.on, telemetryHosts.unexported

	const c = 1
	mk := func(name string, h *hostProc) (*target, error) {
		t := &target{name: name, url: h.endpoint(), body: []byte(weatherCall), client: newClient(), check: checkToolResult, pids: h.serverPIDs}
		var err error
		t.headers, err = sessions(t.client, t.url, c)
		return t, err
	}
	tOff, err := mk("telemetry-off", off)
	if err != nil {
		b.Fatal(err)
	}
	tOn, err := mk("telemetry-on", on)
	if err != nil {
		b.Fatal(err)
	}
	tUnexported, err := mk("telemetry-on-unexported", unexported)
	if err != nil {
		b.Fatal(err)
	}
	res, load := runInterleaved(b, []*target{tOff, tOn, tUnexported}, c)
	cpuOff, cpuOn := res["telemetry-off"].cpuPerCall(), res["telemetry-on"].cpuPerCall()
	b.ReportMetric(us(cpuOff), "off-cpu-µs/call")
	b.ReportMetric(us(cpuOn), "on-cpu-µs/call")
	ratio := func(m map[string]*sample) float64 {
		return float64(m["telemetry-on"].cpuPerCall()) / float64(m["telemetry-off"].cpuPerCall())
	}
	record(atMost(row{what: fmt.Sprintf("tools/call server CPU per call, telemetry on / off, c=%d", c), unit: "µs",
		ours: us(cpuOn), ratio: ratio(res), load: load, spread: spread(res, ratio),
		detail: fmt.Sprintf("(funchost + worker) with telemetry on, 100%% sampled, OTLP/HTTP to a local receiver: %.0f µs; off: %.0f µs; p50 %.0f µs / %.0f µs",
			us(cpuOn), us(cpuOff), us(res["telemetry-on"].pct(50)), us(res["telemetry-off"].pct(50)))}, 1.10))
	cpuUnexported := res["telemetry-on-unexported"].cpuPerCall()
	b.ReportMetric(us(cpuUnexported), "unexported-cpu-µs/call")
	unexportedRatio := func(m map[string]*sample) float64 {
		return float64(m["telemetry-on-unexported"].cpuPerCall()) / float64(m["telemetry-off"].cpuPerCall())
	}
	record(row{what: fmt.Sprintf("tools/call server CPU per call, telemetry on without trace export / off, c=%d", c), unit: "µs",
		ours: us(cpuUnexported), ratio: unexportedRatio(res), load: load, spread: spread(res, unexportedRatio),
		detail: fmt.Sprintf("as on, with OTEL_TRACES_EXPORTER=none: spans made and ended, none exported (leaves out the SDK's OTLP trace exporter; on − this: %.0f µs a call); off: %.0f µs",
			us(cpuOn)-us(cpuUnexported), us(cpuOff))})
}
