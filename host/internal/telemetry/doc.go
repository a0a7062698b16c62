// Package telemetry is funchost's OpenTelemetry: on when host.json says
// "telemetryMode": "OpenTelemetry", configured by the standard OTEL_*
// environment variables through the OpenTelemetry SDK's own reading of
// them, exporting traces and metrics with OTLP over HTTP/protobuf.
//
// It adds links to the host's chains and nothing to its handlers: a
// middleware of the MCP front ([Telemetry.Middleware]) opens one SERVER
// span per request and records mcp.server.operation.duration, per the MCP
// semantic conventions, and an [invoke.Trace] ([Telemetry.InvokeTrace])
// wraps each invocation of the worker in a CLIENT span whose W3C trace
// context travels to the worker in the POST's headers. Off, there is no
// Telemetry: the host passes no link and no Trace, and a call costs what
// it cost without this package.
package telemetry
