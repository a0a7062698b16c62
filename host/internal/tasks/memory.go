package tasks

import (
	"context"
	"sync"
	"time"
)

// Memory is a [Store] in the memory of one process.
type Memory struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]*Task
}

// NewMemory returns an empty store; now is the clock (nil: time.Now).
func NewMemory(now func() time.Time) *Memory {
	if now == nil {
		now = time.Now
	}
	return &Memory{now: now, m: map[string]*Task{}}
}

// Create stores t.
func (s *Memory) Create(_ context.Context, t *Task) error {
	s.mu.Lock()
	defer s.mu.Unlock()
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
	for id, t := range s.m {
		if !now.Before(t.Expires()) {
			delete(s.m, id)
		}
	}
	return nil
}
