package taskrun

import (
	"bytes"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/funcmcp/funcmcp/host/internal/tasks"
)

// A notifications/tasks carries the whole task (see package mcp, listen.go): for a
// completed task its result, which may be large. Every listener of the
// task hears the same task, so it is encoded once and the same bytes are
// written to every stream: the listeners writing it at the same time
// share one copy, and it goes when the last of them has written it. A
// listener's own message around it (its subscription id) is written
// separately, never copied together with it.

// Shared holds the whole tasks being written to listeners, by task
// scope and id.
type Shared struct {
	mu sync.Mutex
	m  map[sharedTaskKey]*sharedTask
	// encodes counts the encodings of tasks whole (see Encodes).
	encodes atomic.Int64
}

type sharedTaskKey struct{ scope, id string }

// sharedTask is one task encoded whole, with the listeners writing it.
type sharedTask struct {
	state []byte        // the task without its result (Change): which state it is
	ready chan struct{} // closed once task is set
	task  []byte
	users int
}

// Acquire returns task t whole, as notifications/tasks carries it (see
// Detailed), encoded once for every listener that asks while another
// holds it; release gives it back once written.
func (s *Shared) Acquire(t *tasks.Task) (task []byte, release func()) {
	state := Change(t).Task
	if !inlines(t) {
		return state, func() {}
	}
	key := sharedTaskKey{t.Scope, t.ID}
	s.mu.Lock()
	if s.m == nil {
		s.m = map[sharedTaskKey]*sharedTask{}
	}
	if e := s.m[key]; e != nil && bytes.Equal(e.state, state) {
		e.users++
		s.mu.Unlock()
		<-e.ready // encoding waits for nothing but the CPU
		return e.task, s.releaser(key, e)
	}
	e := &sharedTask{state: state, ready: make(chan struct{}), users: 1}
	s.m[key] = e // an older state's listeners keep theirs
	s.mu.Unlock()
	s.encodes.Add(1)
	e.task = Detailed(t)
	close(e.ready)
	return e.task, s.releaser(key, e)
}

func (s *Shared) releaser(key sharedTaskKey, e *sharedTask) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if e.users--; e.users == 0 && s.m[key] == e {
				delete(s.m, key)
			}
		})
	}
}

// inlines reports whether task t whole is more than its state: a result
// or input requests.
func inlines(t *tasks.Task) bool {
	return t.Status == tasks.StatusCompleted && len(t.Result) > 0 || t.Status == tasks.StatusInputRequired && len(t.InputRequests) > 0
}

// Detailed is a task whole, as notifications/tasks carries it: its
// result (compact), or the input requests it waits for, inlined.
func Detailed(t *tasks.Task) []byte {
	ch := Change(t)
	body := ch.Task[:len(ch.Task)-1]
	var b bytes.Buffer
	switch {
	case t.Status == tasks.StatusCompleted && len(t.Result) > 0:
		b.Grow(len(body) + len(`,"result":`) + len(t.Result) + 1)
		b.Write(body)
		b.WriteString(`,"result":`)
		if json.Compact(&b, t.Result) != nil {
			b.Write(t.Result)
		}
	case t.Status == tasks.StatusInputRequired && len(t.InputRequests) > 0:
		b.Write(body)
		r, _ := json.Marshal(t.InputRequests) // raw messages from the store: valid
		b.WriteString(`,"inputRequests":`)
		b.Write(r)
	default:
		b.Write(body)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// Writers returns how many listeners are writing a task whole now.
func (s *Shared) Writers() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.m {
		n += e.users
	}
	return n
}

// Encodes returns how many times a task was encoded whole.
func (s *Shared) Encodes() int64 { return s.encodes.Load() }

// Kept returns how many tasks are kept encoded whole.
func (s *Shared) Kept() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m)
}
