package launch

import (
	"os"
	"slices"
	"strings"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/host/internal/telemetry"
)

// envSDKDisabled is the OpenTelemetry variable that turns an SDK off in
// every language; funchost sets it to "true" for the worker when host.json
// leaves telemetry off.
const envSDKDisabled = "OTEL_SDK_DISABLED"

// workerTelemetry is what the worker's settings get for telemetry. Under
// funchost, host.json telemetryMode is the one switch of both processes:
// when funchost's telemetry is off, the worker is started with
// OTEL_SDK_DISABLED=true, after the environment and the Values (the last
// value of a name wins), so that it exports nothing whatever OTEL_* they
// carry. When it is on, the worker's OTEL_* are left as they are.
func (w *Worker) workerTelemetry() []config.Setting {
	if w.o.Telemetry != nil {
		return nil
	}
	return []config.Setting{{Key: envSDKDisabled, Value: "true"}}
}

// Where is where the app's code runs, for Summarize.
type Where int

const (
	// Started: funchost starts the worker process.
	Started Where = iota
	// External: a worker funchost did not start (Options.WorkerURL).
	External
	// InProcess: the app serves itself in funchost's process (package
	// serve), with the host's environment and telemetry switch.
	InProcess
)

// Summarize says whether telemetry is on and where funchost and the app's
// code export, from funchost's environment and the one the worker gets
// (workerGetenv), as where the app's code runs decides.
func (w *Worker) Summarize(where Where) *telemetry.Summary {
	var worker telemetry.Exports
	switch {
	case where == External:
		worker.Reason = "not started by funchost: its own environment decides"
	case where == InProcess && w.o.Telemetry == nil:
		worker.Reason = "the app runs in this process, with " + envSDKDisabled + "=true"
	case where == InProcess:
		worker = telemetry.WorkerExports(os.Getenv)
	case w.o.Telemetry == nil:
		worker.Reason = "funchost starts it with " + envSDKDisabled + "=true"
	default:
		worker = telemetry.WorkerExports(w.workerGetenv())
	}
	return telemetry.Summarize(w.o.Config.TelemetryMode, w.o.Telemetry != nil, telemetry.HostExports(os.Getenv), worker)
}

// workerGetenv reads the environment funchost starts the worker with
// (supervise.Spec): funchost's own (or Options.Environ) and the Values,
// then what funchost adds for telemetry, the last value of a name winning,
// without the variables the worker never gets.
func (w *Worker) workerGetenv() func(string) string {
	base := w.o.Environ
	if base == nil {
		base = os.Environ()
	}
	env := make(map[string]string, len(base))
	for _, kv := range base {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	for _, s := range append(slices.Clone(w.o.Config.Values), w.workerTelemetry()...) {
		env[s.Key] = s.Value
	}
	for _, k := range auth.WorkerHidden {
		delete(env, k)
	}
	return func(k string) string { return env[k] }
}
