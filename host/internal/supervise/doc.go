// Package supervise runs the custom-handler process: it starts it, waits
// until it is ready, keeps it running and stops it. It knows nothing of the
// host: it tells a [Reporter] what happens (the URL calls should go to, a
// worker that exited, unhealthy with a reason, healthy again, a problem for
// the status page).
//
// The worker is started with defaultExecutablePath and its arguments (%VAR%
// expanded), the host's environment plus the local.settings.json Values
// (less the names in [Spec.Hidden]: the host's function keys) and
// FUNCTIONS_CUSTOMHANDLER_PORT, FUNCTIONS_HTTPWORKER_PORT (a free loopback
// port), FUNCTIONS_CUSTOMHANDLER_WORKER_ID, FUNCTIONS_HTTPWORKER_ID and
// FUNCTIONS_APP_ROOT_PATH, in its own process group. On Linux it runs under
// a reaper, the host's own executable started again as a child subreaper
// (package reaper): every process the worker starts stays below it,
// and all of them are killed when the worker exits and when the host stops
// the worker or dies, by any signal. Elsewhere the process group is all
// there is. Its stdout and stderr are copied line by line,
// prefixed "[handler] ". It is ready once GET / gets any HTTP answer (polled
// at once after each line of its output, else 2 ms apart at first, backing
// off to 10 ms, and every 25 ms after a second; only a refused connection
// keeps waiting), within the startup timeout, or as soon as it exits.
//
// A worker that exits is started again on a new port. Exit code 200 asks
// for a restart and is not counted as a failure (such restarts are at least
// the restart delay apart); a liveness probe kills and restarts a worker
// that stops answering. After the third failure within 30 minutes the
// worker is reported Unhealthy and restarts go on with back-off doubling up
// to a minute. Stopping sends SIGTERM to the process group and, after the
// stop timeout, kills the worker's tree (through the reaper) or group.
package supervise
