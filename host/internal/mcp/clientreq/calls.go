package clientreq

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
)

// ErrCancelled is the cause of a tool call's context when the client sent
// notifications/cancelled for it.
var ErrCancelled = errors.New("the client cancelled the call (notifications/cancelled)")

// Calls maps the calls running now to their cancel functions, by the
// scope of their client and request id. The zero value is ready to use.
type Calls struct {
	mu sync.Mutex
	m  map[string]context.CancelCauseFunc
}

// CallKey names a call: its client's scope (see package mcp, callScope)
// and its id.
func CallKey(scope string, id json.RawMessage) string {
	var b bytes.Buffer
	b.WriteString(scope)
	b.WriteByte(0)
	if json.Compact(&b, id) != nil {
		b.Write(bytes.TrimSpace(id))
	}
	return b.String()
}

// Add records the cancel function of the call of key and returns what
// forgets it; a second call with the same key is not recorded.
func (f *Calls) Add(key string, cancel context.CancelCauseFunc) (remove func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m == nil {
		f.m = make(map[string]context.CancelCauseFunc)
	}
	if _, dup := f.m[key]; dup {
		return func() {} // a second call with the same id is not cancellable
	}
	f.m[key] = cancel
	return func() {
		f.mu.Lock()
		delete(f.m, key)
		f.mu.Unlock()
	}
}

// Cancel cancels the call of key, with ErrCancelled, and reports whether
// one ran.
func (f *Calls) Cancel(key string) bool {
	f.mu.Lock()
	cancel, ok := f.m[key]
	f.mu.Unlock()
	if ok {
		cancel(ErrCancelled)
	}
	return ok
}
