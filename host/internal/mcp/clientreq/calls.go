package clientreq

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
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

// Context returns a context of parent that the client of scope can cancel
// with notifications/cancelled for the request id (only when scope is not
// ""), and the function that ends it.
func (f *Calls) Context(parent context.Context, scope string, id json.RawMessage) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(parent)
	if scope == "" {
		return ctx, func() { cancel(nil) }
	}
	remove := f.Add(CallKey(scope, id), cancel)
	return ctx, func() {
		remove()
		cancel(nil)
	}
}

// Run runs call in a context of parent that the client of scope can
// cancel with notifications/cancelled for id (see Context), ended when
// call returns.
func Run[R any](f *Calls, parent context.Context, scope string, id json.RawMessage, call func(context.Context) (R, error)) (R, error) {
	ctx, done := f.Context(parent, scope, id)
	defer done()
	return call(ctx)
}

// Cancelled handles notifications/cancelled (its params) from the client
// of scope: the named call of that scope, if it still runs, is cancelled.
// Unknown ids, and cancellations without a scope, are ignored, as the
// specification asks of unknown ids.
func (f *Calls) Cancelled(params []byte, scope string) {
	if scope == "" {
		return
	}
	if id := wire.ValidID(wire.Member(params, "requestId")); id != nil {
		f.Cancel(CallKey(scope, id))
	}
}
