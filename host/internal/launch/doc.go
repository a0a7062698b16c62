// Package launch is what funchost starts the worker with and what the
// worker's events do to the host: the worker's settings (the app's Values,
// the telemetry switch that host.json telemetryMode sets for both
// processes, the change channel's URL and key), the summary of where each
// process exports telemetry, the supervisor's options, and the
// supervisor's reports turned into the invoke client's worker, the status
// board's health and problems, and the restart count.
package launch
