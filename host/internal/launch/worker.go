package launch

import (
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/host/internal/invoke"
	"github.com/funcmcp/funcmcp/host/internal/status"
	"github.com/funcmcp/funcmcp/host/internal/supervise"
	"github.com/funcmcp/funcmcp/host/internal/telemetry"
	"github.com/funcmcp/funcmcp/metadata"
)

// Options are what a Worker is made with.
type Options struct {
	// Root is the script root; Config the app's configuration (its
	// customHandler and Values).
	Root   string
	Config *config.Config
	// Environ is the environment the worker starts from (nil: funchost's).
	Environ []string
	// Procs is how many worker processes run.
	Procs int
	// HostPort is the port the host listens on, when it is set (not 0):
	// never the worker's.
	HostPort int
	// Telemetry is funchost's; nil when off (the worker is then started
	// with telemetry off too).
	Telemetry *telemetry.Telemetry
	// Changes offers the change channel: its URL and key, both "" when it
	// cannot be offered (announce.Channel.Offer).
	Changes func() (url, key string)

	// Output gets the worker's lines; Logger the supervisor's.
	Output io.Writer
	Logger *slog.Logger
	// The supervisor's bounds (supervise.Options).
	StartupTimeout, StopTimeout time.Duration
	Probe                       supervise.Probe
}

// Worker is what funchost starts the worker with: its settings (the app's
// Values, the telemetry switch, the change channel) and the supervisor
// that runs it.
type Worker struct{ o Options }

// New returns the worker o describes; nothing starts before Supervisor's
// Start.
func New(o *Options) *Worker { return &Worker{o: *o} }

// Supervisor makes the supervisor of the worker host.json describes,
// reporting to r (see Events); restartDelay overrides the first back-off
// step when positive (tests).
func (w *Worker) Supervisor(restartDelay time.Duration, r supervise.Reporter) *supervise.Supervisor {
	return supervise.New(&supervise.Options{
		Spec: supervise.Spec{Root: w.o.Root, Worker: w.o.Config.Worker, Values: w.Values(), Environ: w.o.Environ,
			Hidden: auth.WorkerHidden, Procs: w.o.Procs, HostPort: w.o.HostPort},
		Output:         w.o.Output,
		Logger:         w.o.Logger,
		StartupTimeout: w.o.StartupTimeout,
		StopTimeout:    w.o.StopTimeout,
		RestartDelay:   restartDelay,
		Probe:          w.o.Probe,
	}, r)
}

// Values are the settings the worker process gets: the app's Values,
// the telemetry switch (workerTelemetry) and the change channel. When the
// channel cannot be offered the worker gets the variables empty (set in
// funchost's own environment they would name another host's channel) and
// announces nothing.
func (w *Worker) Values() []config.Setting {
	var u, key string
	if w.o.Changes != nil {
		u, key = w.o.Changes()
	}
	return append(append(slices.Clone(w.o.Config.Values), w.workerTelemetry()...),
		config.Setting{Key: metadata.EnvChangesURL, Value: u},
		config.Setting{Key: metadata.EnvChangesKey, Value: key})
}

// InProcess is what an app serving in funchost's process reads from its
// environment instead of Values: values are the app's Values but the
// host's keys (auth.WorkerHidden), which a worker never gets; own are the
// telemetry switch (workerTelemetry) and, when the channel is offered, the
// change channel, which the host always sets.
func (w *Worker) InProcess() (values, own []config.Setting) {
	for _, v := range w.o.Config.Values {
		if !slices.Contains(auth.WorkerHidden, v.Key) {
			values = append(values, v)
		}
	}
	own = w.workerTelemetry()
	if w.o.Changes != nil {
		if u, key := w.o.Changes(); u != "" {
			own = append(own, config.Setting{Key: metadata.EnvChangesURL, Value: u}, config.Setting{Key: metadata.EnvChangesKey, Value: key})
		}
	}
	return values, own
}

// Events is what the supervisor's reports do to the host: calls go to the
// ready worker, wait while it starts or restarts, fail at once while it is
// unhealthy; problems go to the status page.
type Events struct {
	Invoke    *invoke.Client
	Board     *status.Board
	Telemetry *telemetry.Telemetry // nil when off
}

var (
	_ supervise.Reporter        = Events{}
	_ supervise.RestartReporter = Events{}
)

func (e Events) WorkerURL(url string)    { e.Invoke.SetWorker(url) }
func (e Events) WorkerExited(url string) { e.Invoke.WorkerDown(url) }
func (e Events) Unhealthy(reason string) { e.Board.Unhealthy(reason) }
func (e Events) Healthy()                { e.Board.Healthy() }
func (e Events) Problem(msg string)      { e.Board.AddLiveError(msg) }

// Restarted counts the restart in funcmcp.worker.restarts (telemetry on).
func (e Events) Restarted(reason string) { e.Telemetry.WorkerRestarted(reason) }
