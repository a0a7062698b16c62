package clientreq

import (
	"encoding/json"
	"sync"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/ids"
)

// Answer is a client's response to a request: its result or its error
// object (raw JSON).
type Answer struct {
	Result, Err json.RawMessage
}

// Waits holds the requests waiting for their answer on this instance,
// by WaitKey.
type Waits struct {
	mu sync.Mutex
	m  map[string]chan Answer
}

// WaitKey names a request: its client's scope and its id.
func WaitKey(scope, id string) string { return scope + "\x00" + id }

// Add makes the channel the answer to the request of key comes on.
func (t *Waits) Add(key string) chan Answer {
	ch := make(chan Answer, 1)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.m == nil {
		t.m = make(map[string]chan Answer)
	}
	t.m[key] = ch
	return ch
}

// Remove forgets the request of key.
func (t *Waits) Remove(key string) {
	t.mu.Lock()
	delete(t.m, key)
	t.mu.Unlock()
}

// Deliver hands an answer to the request waiting for it; the first answer
// wins. It reports whether one was waiting.
func (t *Waits) Deliver(key string, a Answer) bool {
	t.mu.Lock()
	ch, ok := t.m[key]
	delete(t.m, key)
	t.mu.Unlock()
	if ok {
		ch <- a // capacity 1, one sender: never blocks
	}
	return ok
}

// RequestIDs returns the maker of the ids of requests to a client of
// scope: custom when it is set (Options.RequestID of the endpoint), else
// instance's id, RequestIDSeparator and 20 random characters.
func RequestIDs(instance string, custom func(scope string, deadline time.Time) string) func(scope string, deadline time.Time) string {
	if custom != nil {
		return custom
	}
	return func(string, time.Time) string {
		return instance + RequestIDSeparator + ids.Random(ids.LowerAlnum, 20)
	}
}
