// Package telemetry is funchost's OpenTelemetry: on when host.json says
// "telemetryMode": "OpenTelemetry", configured by the standard OTEL_*
// environment variables through the OpenTelemetry SDK's own reading of
// them, exporting traces and metrics with OTLP over HTTP/protobuf.
//
// It adds links to the host's chains and nothing to its handlers: a
// middleware of the MCP front ([Telemetry.Middleware]) opens one SERVER
// span per request and records mcp.server.operation.duration, per the MCP
// semantic conventions (span names and metric attributes name only the
// methods, tools, prompts and resources the server and the app declare,
// [Other] otherwise; what a span copies from a request is cut), and an
// [invoke.Trace] ([Telemetry.InvokeTrace])
// wraps each invocation of the worker in a CLIENT span whose W3C trace
// context travels to the worker in the POST's headers. HTTP wrappers
// ([Telemetry.HTTP], [Telemetry.Sessions], [Telemetry.Stream]) count
// refusals and measure sessions; [Telemetry.Span] makes the host's
// INTERNAL task-run spans and [Telemetry.Timed] its validation spans, only
// for a validation that fails or takes [ValidationSpanMin] or more;
// [Telemetry.BackplaneSend] and
// [Telemetry.BackplaneReceive] the two ends of a backplane hop; the
// operator's metrics are recorded by the methods named after them
// ([Telemetry.Refused], [Telemetry.WorkerRestarted], …); [Telemetry.Logger]
// puts trace_id and span_id on log lines; [Summarize] says whether it is on
// and where funchost and its worker export (the start line, the status).
// Off, there is no Telemetry: the
// host passes no link, no Trace and no wrapper, every method of a nil
// *Telemetry returns at once without allocating, and a call costs what it
// cost without this package.
package telemetry
