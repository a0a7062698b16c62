package clientreq

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestCallsCancelled: notifications/cancelled ends the call of its scope
// and id, and nothing else; a call without a scope is not cancellable by
// id; done forgets the call.
func TestCallsCancelled(t *testing.T) {
	var c Calls
	ctx, done := c.Context(t.Context(), "session:a", []byte(`7`))
	other, doneOther := c.Context(t.Context(), "session:b", []byte(`7`))
	defer doneOther()
	unscoped, doneUnscoped := c.Context(t.Context(), "", []byte(`7`))
	defer doneUnscoped()

	c.Cancelled([]byte(`{"requestId":"7"}`), "session:a") // a string is another id
	c.Cancelled([]byte(`{"requestId":7}`), "")            // no scope: ignored
	assert.NoError(t, ctx.Err())
	c.Cancelled([]byte(`{"requestId": 7 }`), "session:a")
	assert.ErrorIs(t, context.Cause(ctx), ErrCancelled)
	assert.NoError(t, other.Err(), "another client's call of the same id runs on")
	assert.NoError(t, unscoped.Err())

	done()
	_, doneAgain := c.Context(t.Context(), "session:a", []byte(`7`))
	defer doneAgain()
	assert.True(t, c.Cancel(CallKey("session:a", []byte(`7`))), "the id is free again once done")
}

// TestRunEndsItsContext: Run's context ends when the call returns, even
// when it panics.
func TestRunEndsItsContext(t *testing.T) {
	var c Calls
	var seen context.Context
	_, err := Run(&c, t.Context(), "s", []byte(`1`), func(ctx context.Context) (int, error) {
		seen = ctx
		return 0, errors.New("failed")
	})
	assert.EqualError(t, err, "failed")
	assert.Error(t, seen.Err())
	assert.False(t, c.Cancel(CallKey("s", []byte(`1`))), "forgotten")

	assert.Panics(t, func() {
		_, _ = Run(&c, t.Context(), "s", []byte(`2`), func(ctx context.Context) (int, error) {
			seen = ctx
			panic(http.ErrAbortHandler)
		})
	})
	assert.Error(t, seen.Err())
	assert.False(t, c.Cancel(CallKey("s", []byte(`2`))), "forgotten after a panic too")
}

func TestResumes(t *testing.T) {
	for v, want := range map[string]bool{"2025-03-26": false, "2025-06-18": false, "2025-11-25": true, "2026-07-28": false} {
		assert.Equal(t, want, Resumes(v), v)
	}
}

// TestServeResumeRefuses: a Last-Event-ID that names no stream here, or a
// stream of another client, is refused with 400 and the grace told.
func TestServeResumeRefuses(t *testing.T) {
	s := NewStore(DefaultResumeStreams, DefaultResumeBytes)
	open := httptest.NewRecorder()
	rs, _ := s.Open(open, "i", "session:a", "owner", time.Minute)
	rs.SetCall(func(error) {}, []byte(`1`))
	for _, c := range []struct{ last, scope string }{{"nope", "session:a"}, {rs.id + "_0", "session:b"}, {rs.id + "_9", "session:a"}} {
		rec := httptest.NewRecorder()
		s.ServeResume(rec, httptest.NewRequest(http.MethodGet, "/", nil), c.last, c.scope, time.Minute)
		assert.Equal(t, http.StatusBadRequest, rec.Code, c.last)
		assert.True(t, strings.HasPrefix(rec.Body.String(), `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: no stream to resume`), rec.Body.String())
		assert.Contains(t, rec.Body.String(), "while it runs and 1m0s after); call again.")
	}
	rs.Finish()
}
