package telemetry

import (
	"net/url"
	"strings"

	"github.com/funcmcp/funcmcp/internal/otelsetup"
)

// Summary says whether telemetry is on and where each process exports:
// funchost's start line and the "telemetry" member of /admin/host/status.
// It holds no secret: no header (OTEL_EXPORTER_OTLP_HEADERS may carry an
// API key) and no credentials, query or fragment of an endpoint URL.
type Summary struct {
	// On: funchost's own telemetry runs (host.json telemetryMode is
	// OpenTelemetry and OTEL_SDK_DISABLED is not "true").
	On bool `json:"on"`
	// Mode is host.json telemetryMode as written ("" when absent).
	Mode string `json:"mode,omitempty"`
	// Host is where funchost exports; Worker where the worker it starts
	// does, as its environment says.
	Host   Exports `json:"host"`
	Worker Exports `json:"worker"`
	// Text is the same in one sentence, as funchost prints it at start
	// after "Telemetry: ".
	Text string `json:"text"`
}

// Exports is where one process's OTLP exporters send, as the OTEL_*
// variables of its environment say; both endpoints are "" when it exports
// nothing, and Reason says why.
type Exports struct {
	// Traces and Metrics are the OTLP/HTTP endpoints of each signal, "" when
	// that signal is not exported (OTEL_TRACES_EXPORTER=none, …).
	Traces  string `json:"traces,omitempty"`
	Metrics string `json:"metrics,omitempty"`
	// Reason says why the process exports nothing.
	Reason string `json:"reason,omitempty"`
}

// Exporting reports whether the process exports anything.
func (e *Exports) Exporting() bool { return e.Traces != "" || e.Metrics != "" }

// defaultEndpoint is where the SDK's OTLP/HTTP exporters send when no
// endpoint variable is set.
const defaultEndpoint = "localhost:4318 (the default)"

// HostExports is where funchost's exporters send when its telemetry is on:
// the SDK's reading of OTEL_EXPORTER_OTLP_ENDPOINT, the per-signal
// endpoints (which win) and OTEL_TRACES_EXPORTER / OTEL_METRICS_EXPORTER
// "none". getenv reads funchost's environment.
func HostExports(getenv func(string) string) Exports {
	return Exports{Traces: signalEndpoint(getenv, "TRACES"), Metrics: signalEndpoint(getenv, "METRICS")}
}

// WorkerExports is where a worker with worker/otel exports, its
// environment read by getenv: nothing when OTEL_SDK_DISABLED is "true" or
// no OTLP endpoint is named (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), else as [HostExports].
func WorkerExports(getenv func(string) string) Exports {
	switch {
	case strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true"):
		return Exports{Reason: "OTEL_SDK_DISABLED=true"}
	case getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") == "":
		return Exports{Reason: "no OTEL_EXPORTER_OTLP_ENDPOINT in its environment"}
	}
	return HostExports(getenv)
}

// signalEndpoint is where the signal ("TRACES", "METRICS") goes, "" when
// its exporter is "none".
func signalEndpoint(getenv func(string) string, signal string) string {
	if strings.EqualFold(getenv("OTEL_"+signal+"_EXPORTER"), "none") {
		return ""
	}
	if v := getenv("OTEL_EXPORTER_OTLP_" + signal + "_ENDPOINT"); v != "" {
		return redactURL(v)
	}
	if v := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); v != "" {
		return redactURL(v)
	}
	return defaultEndpoint
}

// redactURL is u without what may be a secret: its user information,
// query and fragment. A value that is no URL is not shown.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return "(not a URL)"
	}
	p.User, p.RawQuery, p.ForceQuery, p.Fragment, p.RawFragment = nil, "", false, "", ""
	return p.String()
}

// Summarize makes the summary of host.json telemetryMode mode, on when
// funchost's telemetry runs, funchost exporting to host (when on) and its
// worker to worker.
func Summarize(mode string, on bool, host, worker Exports) *Summary {
	s := &Summary{On: on, Mode: mode, Worker: worker}
	var b strings.Builder
	if on {
		s.Host = host
		b.WriteString("on (" + mode + ")")
		if s.Host == s.Worker {
			b.WriteString(", " + exportsText(&s.Host) + " (host and worker)")
		} else {
			b.WriteString("; host: " + exportsText(&s.Host) + "; worker: " + exportsText(&s.Worker))
		}
	} else {
		s.Host = Exports{Reason: offReason(mode)}
		b.WriteString("off (" + s.Host.Reason + "); worker: " + exportsText(&s.Worker))
	}
	s.Text = b.String()
	return s
}

// offReason says why funchost's telemetry is off with host.json
// telemetryMode mode.
func offReason(mode string) string {
	switch {
	case mode == "":
		return "host.json has no telemetryMode"
	case !strings.EqualFold(mode, ModeOpenTelemetry):
		return "host.json telemetryMode is " + quote(mode) + ", not " + ModeOpenTelemetry
	}
	return "OTEL_SDK_DISABLED=true"
}

// quote is s in double quotes, cut to 64 bytes.
func quote(s string) string { return `"` + otelsetup.Bound(s, 64) + `"` }

// exportsText says where e exports, in words.
func exportsText(e *Exports) string {
	switch {
	case !e.Exporting():
		return "exporting nothing (" + e.Reason + ")"
	case e.Traces == e.Metrics:
		return "exporting traces and metrics to " + e.Traces
	case e.Metrics == "":
		return "exporting traces to " + e.Traces + " (metrics: none)"
	case e.Traces == "":
		return "exporting metrics to " + e.Metrics + " (traces: none)"
	}
	return "exporting traces to " + e.Traces + " and metrics to " + e.Metrics
}
