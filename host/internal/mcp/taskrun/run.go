package taskrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/host/internal/peer"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/metadata"
)

// Service runs the tasks of one handler and answers for all of them
// from the store.
type Service struct {
	store           tasks.Store
	ttl, poll, beat time.Duration
	instance        string
	traceparent     func(context.Context) string // see Options.Traceparent
	telemetry       RunTelemetry                 // see Options.Telemetry
	log             *slog.Logger
	now             func() time.Time
	wg              sync.WaitGroup
	mu              sync.Mutex
	local           map[string]*Run // tasks running on this instance, by id
	stopping        bool
	// suspects are the tasks of other instances this instance read with a
	// stale heartbeat: the heartbeat seen and when it was first seen so.
	suspects map[string]suspect
	// trouble is when a store call of this instance last failed or took
	// longer than a heartbeat: a heartbeat read since may be stale for
	// want of storage, not because its instance stopped.
	trouble time.Time
	// prepareRerun, set by OnRerun, prepares this instance to run
	// again a task of a stopped instance (see Service.runAgain): it returns what
	// starts the work once the task is claimed, nil when this instance
	// cannot run it (the tool is unknown here, or no longer allows it).
	prepareRerun func(t *tasks.Task) (start func(claimed *tasks.Task))
}

// suspect is a task whose heartbeat this instance found stale.
type suspect struct{ beat, since time.Time }

// maxSuspects bounds the tasks an instance watches for a verdict; past it
// a stale task is not judged (the safe side) until others are.
const maxSuspects = 10000

// NewService returns the service running the tasks of one endpoint, on
// the instance named instance, with the options o (Store required).
func NewService(o *Options, instance string, log *slog.Logger) *Service {
	s := &Service{store: o.Store, ttl: o.TTL, poll: o.PollInterval, beat: o.Heartbeat, instance: instance,
		traceparent: o.Traceparent, telemetry: o.Telemetry, log: log, now: time.Now, local: map[string]*Run{}, suspects: map[string]suspect{}}
	if s.ttl <= 0 {
		s.ttl = DefaultTaskTTL
	}
	if s.poll <= 0 {
		s.poll = DefaultTaskPollInterval
	}
	if s.beat <= 0 {
		s.beat = DefaultTaskHeartbeat
	}
	return s
}

// errTaskOver: the task ended (cancelled, expired, failed) while its work
// was still running.
var errTaskOver = errors.New("the task has ended")

// errInstanceLost ends the work of a task that another instance ended
// failed, having judged this one stopped.
var errInstanceLost = errors.New("another instance judged this one stopped and ended the task failed")

// errRunTaken ends the work of a task that another instance claimed and
// runs again, having judged this one stopped.
var errRunTaken = errors.New("another instance judged this one stopped and runs the task again")

// ErrHostStopping ends the work of tasks when the host stops.
var ErrHostStopping = errors.New("the host stopped while the task was running")

// Get returns the task id of scope, ending it failed first when the
// instance that ran it is judged stopped (see judgeStopped).
func (s *Service) Get(ctx context.Context, scope, id string) (*tasks.Task, error) {
	t, err := s.observe(func() (*tasks.Task, error) { return s.store.Get(ctx, id) })
	if err != nil {
		return nil, err
	}
	if t.Scope != scope {
		return nil, tasks.ErrNotFound
	}
	if t.Status.Terminal() || s.runsHere(id) || !s.judgeStopped(id, t.Heartbeat) {
		return t, nil
	}
	if t.CanRunAgain() {
		if claimed, err, ok := s.runAgain(ctx, t); ok {
			return claimed, err
		}
	}
	lost := false
	t, err = s.observe(func() (*tasks.Task, error) {
		return s.store.Update(ctx, id, func(t *tasks.Task) error {
			lost = false
			if !t.Status.Terminal() && s.now().Sub(t.Heartbeat) >= staleBeats*s.beat {
				lost = true
				runs := ""
				if t.Attempts > 1 {
					runs = fmt.Sprintf(", on run %d of the %d its tool allows", t.RunNumber(), t.Attempts)
				}
				settle(t, tasks.StatusFailed, s.now(), fmt.Sprintf("The host instance running the task (%s) stopped answering: "+
					"no heartbeat since %s. Any result it produces later is discarded.", t.Instance, t.Heartbeat.UTC().Format(TimeFormat)),
					&jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("The host instance running the task (%s) stopped before the task finished%s.", t.Instance, runs)}, nil)
				t.InstanceLost = true
			}
			return nil
		})
	})
	if !lost && err == nil && t.Status == tasks.StatusCompleted {
		// Finished meanwhile: Update's copy may lack a result kept apart.
		return s.store.Get(ctx, id)
	}
	if lost && err == nil {
		s.log.Warn("mcp: a task's instance was judged stopped (no heartbeat): the task ended failed, and a result it produces later is discarded",
			"task", id, "instance", t.Instance, "heartbeat", t.Heartbeat)
	}
	return t, err
}

// observe runs a store call and notes trouble when it fails (not found
// aside) or takes longer than a heartbeat.
func (s *Service) observe(call func() (*tasks.Task, error)) (*tasks.Task, error) {
	start := time.Now()
	t, err := call()
	if (err != nil && !errors.Is(err, tasks.ErrNotFound)) || time.Since(start) > s.beat {
		s.mu.Lock()
		s.trouble = s.now()
		s.mu.Unlock()
	}
	return t, err
}

// judgeStopped reports whether the instance running a task whose record
// shows heartbeat beat is to be judged stopped. A heartbeat older than
// staleBeats heartbeats is suspect, not yet a verdict: this instance must
// have read the same heartbeat, stale, for staleBeats more heartbeats, with
// no trouble reaching the store meanwhile. So a storage stall, which stops
// every instance's heartbeats at once, is not taken for a stopped
// instance: after it the running instance's next heartbeat clears the
// suspicion.
func (s *Service) judgeStopped(id string, beat time.Time) bool {
	now := s.now()
	window := staleBeats * s.beat
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(beat) < window {
		delete(s.suspects, id)
		return false
	}
	sp, ok := s.suspects[id]
	if !ok || !sp.beat.Equal(beat) {
		if len(s.suspects) >= maxSuspects {
			s.pruneSuspectsLocked(now)
		}
		if len(s.suspects) < maxSuspects {
			s.suspects[id] = suspect{beat: beat, since: now}
		}
		return false
	}
	if now.Sub(sp.since) < window || now.Sub(s.trouble) < window {
		return false
	}
	delete(s.suspects, id)
	return true
}

// pruneSuspectsLocked forgets suspects no reader came back for.
func (s *Service) pruneSuspectsLocked(now time.Time) {
	for id, sp := range s.suspects {
		if now.Sub(sp.since) > 10*staleBeats*s.beat {
			delete(s.suspects, id)
		}
	}
}

func (s *Service) runsHere(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.local[id] != nil
}

// wake tells the run of task id on this instance, if any, to read its
// record now.
func (s *Service) wake(id string) {
	s.mu.Lock()
	r := s.local[id]
	s.mu.Unlock()
	if r != nil {
		r.poke()
	}
}

// Answer delivers the answers of tasks/update: each answers the pending
// request of its key (others are ignored); when none is left pending the
// task is working again.
func (s *Service) Answer(ctx context.Context, scope, id string, answers map[string]json.RawMessage) error {
	_, err := s.store.Update(ctx, id, func(t *tasks.Task) error {
		if t.Scope != scope {
			return tasks.ErrNotFound
		}
		if t.Status.Terminal() {
			return nil
		}
		changed := false
		for k, a := range answers {
			if _, ok := t.InputRequests[k]; !ok {
				continue
			}
			delete(t.InputRequests, k)
			if t.InputResponses == nil {
				t.InputResponses = map[string]json.RawMessage{}
			}
			t.InputResponses[k] = a
			changed = true
		}
		if changed {
			if len(t.InputRequests) == 0 && t.Status == tasks.StatusInputRequired {
				t.Status = tasks.StatusWorking
			}
			t.Updated = s.now()
		}
		return nil
	})
	if err == nil {
		s.wake(id)
	}
	return err
}

// Cancel ends a task cancelled (a terminal task stays as it is); the
// instance running it stops the work.
func (s *Service) Cancel(ctx context.Context, scope, id string) error {
	_, err := s.store.Update(ctx, id, func(t *tasks.Task) error {
		if t.Scope != scope {
			return tasks.ErrNotFound
		}
		if !t.Status.Terminal() {
			t.CancelRequested = true
			settle(t, tasks.StatusCancelled, s.now(), "Cancelled by the client.", nil, nil)
		}
		return nil
	})
	if err == nil {
		s.wake(id)
	}
	return err
}

// settle makes t terminal.
func settle(t *tasks.Task, st tasks.Status, now time.Time, message string, e *jsonrpc.Error, result json.RawMessage) {
	t.Status, t.Updated, t.Error, t.Result = st, now, e, result
	if message != "" {
		t.StatusMessage = message
	}
	t.InputRequests, t.InputResponses = nil, nil
}

// Stop ends the tasks running here (failed: the host stopped) and waits
// for their records, at most until ctx ends.
func (s *Service) Stop(ctx context.Context) {
	s.mu.Lock()
	s.stopping = true
	runs := make([]*Run, 0, len(s.local))
	for _, r := range s.local {
		runs = append(runs, r)
	}
	s.mu.Unlock()
	for _, r := range runs {
		r.cancel(ErrHostStopping)
	}
	done := make(chan struct{})
	go func() { s.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// Run is one task whose work runs on this instance.
type Run struct {
	s       *Service
	id      string
	scope   string
	owner   owner.ID // counted against the store's limits
	tool    string
	ttl     time.Duration
	poll    time.Duration
	ctx     context.Context // the work's
	cancel  context.CancelCauseFunc
	started chan struct{} // closed once the record exists
	wakeCh  chan struct{}
	// onAdmission: the record is made when the call is admitted (see
	// [Run.Admit]), not before the call runs.
	onAdmission bool
	// attempt is the run of the task this is (1 the first), attempts the
	// runs its tool allows, rerun the call as the record keeps it for a
	// run on another instance (nil when it may not be run again); note
	// goes before each status message of a run after the first.
	attempt, attempts int
	rerun             json.RawMessage
	note              string

	mu       sync.Mutex
	created  *tasks.Task // the record as created
	isOn     bool
	message  string // the latest status message, not yet stored when dirty
	dirty    bool
	flushed  time.Time                       // when a status message was last stored
	waiters  map[string]chan json.RawMessage // requests waiting for their answer, by key
	finished bool
}

// NewRun prepares a task for a call of tool; nothing is stored yet.
func (s *Service) NewRun(ctx context.Context, cancel context.CancelCauseFunc, scope string, who owner.ID, tool string, ts *metadata.TaskSupport) *Run {
	r := &Run{s: s, id: tasks.NewID(), scope: scope, owner: who, tool: tool, ttl: s.ttl, poll: s.poll, attempt: 1,
		ctx: ctx, cancel: cancel, started: make(chan struct{}), wakeCh: make(chan struct{}, 1), waiters: map[string]chan json.RawMessage{}}
	if ts.TTLMs > 0 {
		r.ttl = time.Duration(ts.TTLMs) * time.Millisecond
	}
	r.ttl = min(r.ttl, MaxTaskTTL)
	if ts.PollIntervalMs > 0 {
		r.poll = time.Duration(ts.PollIntervalMs) * time.Millisecond
	}
	return r
}

// Start stores the task's record (durably: once it returns, any instance
// finds it) and starts watching it. It is done once; later calls return
// the record made by the first.
func (r *Run) Start(ctx context.Context) (*tasks.Task, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.isOn {
		return r.created, nil
	}
	if r.ctx.Err() != nil {
		return nil, context.Cause(r.ctx)
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	r.s.mu.Lock()
	stopping := r.s.stopping
	r.s.mu.Unlock()
	if stopping {
		return nil, ErrHostStopping
	}
	now := r.s.now()
	t := &tasks.Task{ID: r.id, Scope: r.scope, Owner: r.owner, Tool: r.tool, Instance: r.s.instance, Status: tasks.StatusWorking,
		Created: now, Updated: now, Heartbeat: now, TTL: r.ttl, PollInterval: r.poll}
	if r.rerun != nil {
		t.Attempt, t.Attempts, t.Rerun = 1, r.attempts, r.rerun
	}
	if r.s.traceparent != nil {
		if t.Trace = r.s.traceparent(ctx); t.Trace == "" {
			t.Trace = r.s.traceparent(r.ctx) // a deferred task, started from the worker: the call's
		}
	}
	if err := r.s.store.Create(ctx, t); err != nil {
		return nil, fmt.Errorf("storing the task: %w", err)
	}
	r.created, r.isOn = t, true
	r.s.mu.Lock()
	r.s.local[r.id] = r
	r.s.mu.Unlock()
	r.s.wg.Add(1)
	close(r.started)
	return t, nil
}

// On reports whether the task exists (start succeeded).
func (r *Run) On() bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.isOn
}

func (r *Run) poke() {
	select {
	case r.wakeCh <- struct{}{}:
	default:
	}
}

// Progress keeps the latest progress as the task's status message, stored
// at the next heartbeat.
func (r *Run) Progress(progress, total float64, message string) error {
	if !r.On() {
		return peer.ErrNotRequested // a deferred task not started: the call has no progress token
	}
	if message == "" {
		message = formatProgress(progress, total)
	}
	message = r.note + message
	r.mu.Lock()
	r.message, r.dirty = message, true
	due := time.Since(r.flushed) >= statusEvery
	r.mu.Unlock()
	if due {
		r.poke() // stored now; later ones at most once per statusEvery
	}
	return nil
}

func formatProgress(progress, total float64) string {
	if total > 0 {
		return fmt.Sprintf("%g of %g done", progress, total)
	}
	return fmt.Sprintf("%g done", progress)
}

// Request records a request to the client as one of the task's input
// requests and waits for the answer a tasks/update brings, on any
// instance.
func (r *Run) Request(ctx context.Context, key, method string, params json.RawMessage) (*metadata.RequestReply, error) {
	if key == "" {
		return nil, fmt.Errorf("%w: a request needs a key", peer.ErrBadClientRequest)
	}
	var entry bytes.Buffer
	entry.WriteString(`{"method":`)
	appendString(&entry, method)
	entry.WriteString(`,"params":`)
	entry.Write(params)
	entry.WriteByte('}')
	answer := make(chan json.RawMessage, 1)
	r.mu.Lock()
	if r.finished {
		r.mu.Unlock()
		return nil, peer.ErrCallEnded
	}
	r.waiters[key] = answer
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		delete(r.waiters, key)
		r.mu.Unlock()
	}()
	_, err := r.s.store.Update(ctx, r.id, func(t *tasks.Task) error {
		if t.Status.Terminal() || !r.owns(t) {
			return errTaskOver // ended, or run again elsewhere: this run asks nothing
		}
		if t.InputRequests == nil {
			t.InputRequests = map[string]json.RawMessage{}
		}
		t.InputRequests[key] = entry.Bytes()
		t.Status, t.Updated = tasks.StatusInputRequired, r.s.now()
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.poke() // poll faster while waiting
	select {
	case a := <-answer:
		return &metadata.RequestReply{Result: a}, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// waiting reports whether a request waits for its answer.
func (r *Run) waiting() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.waiters) > 0
}

// watch keeps the record fresh while the work runs: a heartbeat, the
// latest status message, and from the record the answers to hand to
// waiting requests and a cancellation (or expiry) to stop the work. It
// ends with ctx (the work's).
func (r *Run) watch(ctx context.Context) {
	timer := time.NewTimer(r.s.beat)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wakeCh:
		case <-timer.C:
		}
		r.pass(ctx)
		next := r.s.beat
		if r.waiting() {
			next = min(inputPoll, next)
		}
		r.mu.Lock()
		if r.dirty {
			next = min(next, statusEvery)
		}
		r.mu.Unlock()
		timer.Reset(next)
	}
}

// pass is one read and write of the record.
func (r *Run) pass(ctx context.Context) {
	r.mu.Lock()
	message, dirty := r.message, r.dirty
	r.mu.Unlock()
	var answers map[string]json.RawMessage
	var over error
	_, err := r.s.store.Update(ctx, r.id, func(t *tasks.Task) error {
		answers, over = nil, nil
		if t.Status.Terminal() {
			over = errTaskOver
			switch {
			case t.CancelRequested:
				over = errors.New("the task was cancelled")
			case t.InstanceLost:
				over = errInstanceLost
			}
			return over
		}
		if !r.owns(t) {
			over = errRunTaken
			return over
		}
		t.Heartbeat = r.s.now()
		if dirty && t.StatusMessage != message {
			t.StatusMessage, t.Updated = message, t.Heartbeat
		}
		r.mu.Lock()
		for k := range r.waiters {
			if a, ok := t.InputResponses[k]; ok {
				if answers == nil {
					answers = map[string]json.RawMessage{}
				}
				answers[k] = a
				delete(t.InputResponses, k)
			}
		}
		r.mu.Unlock()
		return nil
	})
	switch {
	case errors.Is(over, errRunTaken):
		r.s.log.Warn("mcp: another instance judged this one stopped (its heartbeats did not reach the task store) and runs the task again: "+
			"the task's work here is stopped and its result discarded", "task", r.id, "tool", r.tool)
		r.cancel(over)
		return
	case errors.Is(over, errInstanceLost):
		r.s.log.Warn("mcp: another instance judged this one stopped (its heartbeats did not reach the task store): "+
			"the task's work is stopped and its result discarded", "task", r.id, "tool", r.tool)
		r.cancel(over)
		return
	case over != nil:
		r.cancel(over)
		return
	case errors.Is(err, tasks.ErrNotFound):
		r.cancel(errors.New("the task's time to live ran out"))
		return
	case err != nil:
		// The store failed: this instance is not stopped, and its work
		// goes on; the next pass tries again.
		r.s.mu.Lock()
		r.s.trouble = r.s.now()
		r.s.mu.Unlock()
		return
	}
	r.mu.Lock()
	if dirty {
		r.flushed = time.Now()
		if r.message == message {
			r.dirty = false
		}
	}
	for k, a := range answers {
		if ch := r.waiters[k]; ch != nil {
			ch <- a // capacity 1, one answer per key
			delete(r.waiters, k)
		}
	}
	r.mu.Unlock()
}

// Finish stores the outcome of the work: the result (completed, also when
// it is an isError result), or failed with the protocol error. A task
// cancelled meanwhile stays cancelled.
func (r *Run) Finish(ctx context.Context, result json.RawMessage, failure *jsonrpc.Error) {
	r.mu.Lock()
	r.finished = true
	message, dirty := r.message, r.dirty
	r.mu.Unlock()
	defer func() {
		r.s.mu.Lock()
		delete(r.s.local, r.id)
		r.s.mu.Unlock()
		r.s.wg.Done()
	}()
	// The work's context may be over (cancelled, the host stopping): the
	// record is written anyway, bounded.
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	discarded := false
	_, err := r.s.store.Update(wctx, r.id, func(t *tasks.Task) error {
		discarded = false
		if t.Status.Terminal() {
			discarded = t.InstanceLost && failure == nil
			return nil
		}
		if !r.owns(t) {
			discarded = failure == nil // another instance runs the task again
			return nil
		}
		if dirty {
			t.StatusMessage = message // the last progress, even between heartbeats
		}
		if failure != nil {
			settle(t, tasks.StatusFailed, r.s.now(), "", failure, nil)
		} else {
			settle(t, tasks.StatusCompleted, r.s.now(), "", nil, result)
		}
		return nil
	})
	if discarded && err == nil {
		r.s.log.Warn("mcp: a task's result was discarded: another instance had judged this one stopped and ended the task failed or runs it again",
			"task", r.id, "tool", r.tool, "bytes", len(result))
	}
	if le, ok := errors.AsType[*owner.LimitError](err); ok {
		// The store keeps no more result bytes (of this owner, or at all):
		// the task fails, saying why, rather than holding memory it may not.
		r.s.log.Warn("mcp: a task's result was not kept", "task", r.id, "tool", r.tool, "bytes", len(result), "error", err)
		_, err = r.s.store.Update(wctx, r.id, func(t *tasks.Task) error {
			if t.Status.Terminal() || !r.owns(t) {
				return nil
			}
			settle(t, tasks.StatusFailed, r.s.now(), "", &jsonrpc.Error{Code: jsonrpc.CodeServerError,
				Message: fmt.Sprintf("The task's result (%d bytes) was not kept: %s.", len(result), le)}, nil)
			return nil
		})
	}
	if err != nil && !errors.Is(err, tasks.ErrNotFound) {
		r.s.log.Error("mcp: storing the outcome of a task failed", "task", r.id, "tool", r.tool, "error", err)
	}
}

// WatchWhenStarted watches the task's record once it exists.
func (r *Run) WatchWhenStarted(ctx context.Context) {
	select {
	case <-r.started:
		r.watch(ctx)
	case <-ctx.Done():
	}
}

// owns reports whether record t is of this run: the instance that last
// claimed the task is this one, for this run.
func (r *Run) owns(t *tasks.Task) bool {
	return t.Instance == r.s.instance && t.RunNumber() == r.attempt
}

// runAgain claims task seen, whose instance was judged stopped, and runs it
// again here. ok is false when this instance does not (it does not serve
// the tool with reruns): the task then ends failed as any other. When
// another instance claimed it first, the task is read again.
func (s *Service) runAgain(ctx context.Context, seen *tasks.Task) (t *tasks.Task, err error, ok bool) {
	if s.prepareRerun == nil {
		return nil, nil, false
	}
	s.mu.Lock()
	stopping := s.stopping
	s.mu.Unlock()
	if stopping {
		return seen, nil, true // an instance that runs nothing new leaves the verdict to others
	}
	start := s.prepareRerun(seen)
	if start == nil {
		return nil, nil, false
	}
	next := seen.RunNumber() + 1
	msg := fmt.Sprintf("The host instance running the task (%s) stopped answering: run again on another instance (%s), attempt %d of %d.",
		seen.Instance, s.instance, next, seen.Attempts)
	claimed, err := s.observe(func() (*tasks.Task, error) {
		return tasks.Claim(ctx, s.store, seen.ID, seen, s.instance, s.now(), msg)
	})
	if errors.Is(err, tasks.ErrNotClaimed) {
		t, err = s.store.Get(ctx, seen.ID) // another instance was first, or the task ended
		return t, err, true
	}
	if err != nil {
		return nil, err, true
	}
	s.log.Warn("mcp: a task's instance was judged stopped (no heartbeat): the task runs again on this instance",
		"task", seen.ID, "tool", seen.Tool, "instance", seen.Instance, "heartbeat", seen.Heartbeat, "attempt", next, "attempts", seen.Attempts)
	start(claimed)
	return claimed, nil, true
}

// Adopt makes the run on this instance of task t, which this instance
// claimed: its record exists, so it is started at once. nil when the host
// is stopping.
func (s *Service) Adopt(ctx context.Context, cancel context.CancelCauseFunc, t *tasks.Task) *Run {
	r := &Run{s: s, id: t.ID, scope: t.Scope, owner: t.Owner, tool: t.Tool, ttl: t.TTL, poll: t.PollInterval,
		attempt: t.RunNumber(), attempts: t.Attempts, rerun: t.Rerun, created: t, isOn: true,
		note: fmt.Sprintf("Attempt %d of %d (run again on another instance): ", t.RunNumber(), t.Attempts),
		ctx:  ctx, cancel: cancel, started: make(chan struct{}), wakeCh: make(chan struct{}, 1), waiters: map[string]chan json.RawMessage{}}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping {
		return nil
	}
	s.local[r.id] = r
	s.wg.Add(1)
	close(r.started)
	return r
}

// Started is closed once the task's record exists.
func (r *Run) Started() <-chan struct{} { return r.started }

// Created is the task's record as created; nil before [Run.Start].
func (r *Run) Created() *tasks.Task {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.created
}

// ID is the task's id.
func (r *Run) ID() string { return r.id }

// Tool is the name of the tool the task calls.
func (r *Run) Tool() string { return r.tool }

// Attempt is the run of the task this is, 1 the first.
func (r *Run) Attempt() int { return r.attempt }

// KeepForRerun makes the task's record keep call (encoded) for a run on
// another instance, allowing attempts runs in all. It is set before
// [Run.Start].
func (r *Run) KeepForRerun(call json.RawMessage, attempts int) {
	r.rerun, r.attempts = call, attempts
}

// MakeOnAdmission has the record made when the call is admitted
// ([Run.Admit], from [Work.Admitted]), not before the call runs.
func (r *Run) MakeOnAdmission() { r.onAdmission = true }

// OnAdmission reports whether the record is made on admission.
func (r *Run) OnAdmission() bool { return r.onAdmission }

// Publish makes every write of the service that makes a task or changes
// its status or status message publish the change to pub (see
// [PublishingStore]). Set before the service is used.
func (s *Service) Publish(pub notify.Publisher) {
	s.store = PublishingStore{Store: s.store, Pub: pub}
}

// SetClock replaces the clock heartbeats are written and judged by (a
// test's fake clock). Set before the service is used.
func (s *Service) SetClock(now func() time.Time) { s.now = now }
