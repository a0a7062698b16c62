package tasks

import (
	"container/heap"
	"context"
	"sync"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// Memory is a [Store] in the memory of one process. It keeps tasks and the
// bytes of their results within [MemoryLimits], counted per owner and for
// all, and removes each record when it expires (a timer set to the next
// expiry), so that an expired result does not hold memory until a sweep.
// A kept result is held once: every Get shares it.
type Memory struct {
	now     func() time.Time
	kept    *owner.Counter // tasks
	results *owner.Counter // bytes of results
	mu      sync.Mutex
	m       map[string]*memEntry
	expiry  expiryHeap
	timer   *time.Timer
	timerAt time.Time // when timer fires; zero when it is not set
}

// The settings that change the limits of a [Memory] store (read by the
// host; named in refusals).
const (
	SettingMaxTasks               = "FUNCMCP_TASK_MAX_KEPT"
	SettingMaxTasksPerOwner       = "FUNCMCP_TASK_MAX_KEPT_PER_CLIENT"
	SettingMaxResultBytes         = "FUNCMCP_TASK_RESULT_BYTES"
	SettingMaxResultBytesPerOwner = "FUNCMCP_TASK_RESULT_BYTES_PER_CLIENT"
)

// MemoryLimits bound what a [Memory] store keeps until the tasks expire.
// Zero or less means the default.
type MemoryLimits struct {
	// Tasks and TasksPerOwner bound the unexpired tasks, in all and of one
	// owner.
	Tasks, TasksPerOwner int64
	// ResultBytes and ResultBytesPerOwner bound the bytes of kept results,
	// in all and of one owner.
	ResultBytes, ResultBytesPerOwner int64
}

// Defaults of [MemoryLimits].
const (
	MaxMemoryTasks               = 10000
	MaxMemoryTasksPerOwner       = 1000
	MaxMemoryResultBytes         = 256 << 20
	MaxMemoryResultBytesPerOwner = 64 << 20
)

func (l MemoryLimits) withDefaults() MemoryLimits {
	for _, d := range []struct {
		v   *int64
		def int64
	}{{&l.Tasks, MaxMemoryTasks}, {&l.TasksPerOwner, MaxMemoryTasksPerOwner},
		{&l.ResultBytes, MaxMemoryResultBytes}, {&l.ResultBytesPerOwner, MaxMemoryResultBytesPerOwner}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	return l
}

// memEntry is one kept task with what it counts.
type memEntry struct {
	t            *Task
	index        int // in the expiry heap
	releaseTask  func()
	releaseBytes func()
}

// NewMemory returns an empty store with the default limits; now is the
// clock (nil: time.Now).
func NewMemory(now func() time.Time) *Memory { return NewMemoryWith(now, MemoryLimits{}) }

// NewMemoryWith returns an empty store bounded by l.
func NewMemoryWith(now func() time.Time, l MemoryLimits) *Memory {
	if now == nil {
		now = time.Now
	}
	l = l.withDefaults()
	return &Memory{
		now:     now,
		kept:    owner.NewCounter("kept tasks", SettingMaxTasksPerOwner, owner.Limit{PerOwner: l.TasksPerOwner, Global: l.Tasks}),
		results: owner.NewCounter("bytes of kept task results", SettingMaxResultBytesPerOwner, owner.Limit{PerOwner: l.ResultBytesPerOwner, Global: l.ResultBytes}),
		m:       map[string]*memEntry{},
	}
}

// Create stores t, or refuses with an *owner.LimitError naming the limit
// reached; a refused task leaves nothing.
func (s *Memory) Create(_ context.Context, t *Task) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(s.now())
	releaseTask, err := s.kept.Take(t.Owner, 1)
	if err != nil {
		return err
	}
	releaseBytes, err := s.results.Take(t.Owner, int64(len(t.Result)))
	if err != nil {
		releaseTask()
		return err
	}
	if old := s.m[t.ID]; old != nil {
		s.removeLocked(old)
	}
	e := &memEntry{t: t.clone(), releaseTask: releaseTask, releaseBytes: releaseBytes}
	s.m[t.ID] = e
	heap.Push(&s.expiry, e)
	s.armLocked()
	return nil
}

// Get returns a copy of the task; its Result is the store's own, shared by
// every reader, and must not be changed.
func (s *Memory) Get(_ context.Context, id string) (*Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.liveLocked(id)
	if err != nil {
		return nil, err
	}
	return e.t.clone(), nil
}

// liveLocked returns the entry of id, removing it when it has expired.
func (s *Memory) liveLocked(id string) (*memEntry, error) {
	e, ok := s.m[id]
	if !ok {
		return nil, ErrNotFound
	}
	if !s.now().Before(e.t.Expires()) {
		s.removeLocked(e)
		return nil, ErrNotFound
	}
	return e, nil
}

// Update changes the task under the store's lock. A change that would pass
// the result budget is refused with an *owner.LimitError, and nothing of it
// is stored.
func (s *Memory) Update(_ context.Context, id string, change func(t *Task) error) (*Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.liveLocked(id)
	if err != nil {
		return nil, err
	}
	c := e.t.clone()
	if err := change(c); err != nil {
		return nil, err
	}
	if len(c.Result) != len(e.t.Result) {
		// Every Take of s.results happens under s.mu: giving the old size
		// back first, it can be taken again if the new one is refused.
		e.releaseBytes()
		release, err := s.results.Take(e.t.Owner, int64(len(c.Result)))
		if err != nil {
			e.releaseBytes, _ = s.results.Take(e.t.Owner, int64(len(e.t.Result)))
			return nil, err
		}
		e.releaseBytes = release
	}
	c.Owner, c.Created, c.TTL = e.t.Owner, e.t.Created, e.t.TTL // fixed at creation: the counts and the expiry follow them
	e.t = c
	return c.clone(), nil
}

// Sweep removes tasks expired before now (the timer removes them already;
// Sweep is for a clock that is not the real one).
func (s *Memory) Sweep(_ context.Context, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(now)
	return nil
}

// Len returns how many records the store holds (expired ones not yet
// removed included).
func (s *Memory) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}

// ResultBytes returns the bytes of the results it holds.
func (s *Memory) ResultBytes() int64 { return s.results.Total() }

func (s *Memory) removeLocked(e *memEntry) {
	if e.index >= 0 {
		heap.Remove(&s.expiry, e.index)
	}
	delete(s.m, e.t.ID)
	e.releaseTask()
	e.releaseBytes()
}

// expireLocked removes the tasks expired at now.
func (s *Memory) expireLocked(now time.Time) {
	for len(s.expiry) > 0 && !now.Before(s.expiry[0].t.Expires()) {
		s.removeLocked(s.expiry[0])
	}
}

// armLocked sets the timer to the next expiry.
func (s *Memory) armLocked() {
	if len(s.expiry) == 0 {
		return
	}
	next := s.expiry[0].t.Expires()
	if !s.timerAt.IsZero() && !next.Before(s.timerAt) {
		return // set to fire no later
	}
	d := max(next.Sub(s.now()), 0)
	s.timerAt = next
	if s.timer == nil {
		s.timer = time.AfterFunc(d, s.onTimer)
		return
	}
	s.timer.Reset(d)
}

func (s *Memory) onTimer() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.timerAt = time.Time{}
	s.expireLocked(s.now())
	s.armLocked()
}

// expiryHeap orders entries by expiry, the soonest first.
type expiryHeap []*memEntry

func (h expiryHeap) Len() int           { return len(h) }
func (h expiryHeap) Less(i, j int) bool { return h[i].t.Expires().Before(h[j].t.Expires()) }
func (h expiryHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *expiryHeap) Push(x any) {
	e := x.(*memEntry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *expiryHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	e.index = -1
	*h = old[:len(old)-1]
	return e
}
