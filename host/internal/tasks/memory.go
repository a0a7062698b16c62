package tasks

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Memory is a [Store] in the memory of one process, holding at most
// [MaxMemoryTasks] tasks that have not expired.
type Memory struct {
	now func() time.Time
	max int
	mu  sync.Mutex
	m   map[string]*Task
}

// MaxMemoryTasks bounds the tasks a [Memory] store keeps: each holds its
// result until it expires.
const MaxMemoryTasks = 10000

// ErrFull: the store keeps as many tasks as it may; one must expire first.
var ErrFull = errors.New("too many tasks are kept: wait for some to expire")

// NewMemory returns an empty store; now is the clock (nil: time.Now).
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, max: MaxMemoryTasks, m: map[string]*Task{}}
}

// Create stores t, or fails with ErrFull.
func (s *Memory) Create(_ context.Context, t *Task) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.m) >= s.max {
		s.sweepLocked(s.now())
		if len(s.m) >= s.max {
			return ErrFull
		}
	}
	s.m[t.ID] = t.clone()
	return nil
}

// Get returns a copy of the task.
func (s *Memory) Get(_ context.Context, id string) (*Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[id]
	if !ok || !s.now().Before(t.Expires()) {
		return nil, ErrNotFound
	}
	return t.clone(), nil
}

// Update changes the task under the store's lock.
func (s *Memory) Update(_ context.Context, id string, change func(t *Task) error) (*Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[id]
	if !ok || !s.now().Before(t.Expires()) {
		return nil, ErrNotFound
	}
	c := t.clone()
	if err := change(c); err != nil {
		return nil, err
	}
	s.m[id] = c
	return c.clone(), nil
}

// Sweep removes expired tasks.
func (s *Memory) Sweep(_ context.Context, now time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sweepLocked(now)
	return nil
}

func (s *Memory) sweepLocked(now time.Time) {
	for id, t := range s.m {
		if !now.Before(t.Expires()) {
			delete(s.m, id)
		}
	}
}
