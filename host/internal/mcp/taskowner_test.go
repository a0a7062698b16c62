package mcp

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/caller"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/metadata"
)

// checkedKeys stands for the host's key link (auth.Secrets.RequireKey) in
// front of a test endpoint: every x-functions-key is taken as checked and
// names its holders' owner. Anything else a client sends names no owner.
func checkedKeys(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if key := r.Header.Get("X-Functions-Key"); key != "" {
			var c *caller.Caller
			r, c = caller.Ensure(r)
			c.SetKey(owner.KeyOwner(key))
		}
		next.ServeHTTP(w, r)
	})
}

// TestTaskBelongsToItsPrincipal: behind the access token check (which puts
// the principal in the request's record and takes the Authorization header away), a
// task belongs to its principal: a refreshed token of the same user reads
// it, another user's does not.
func TestTaskBelongsToItsPrincipal(t *testing.T) {
	ft := newFakeTools()
	ft.call = func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	tt := &taskTools{fakeTools: ft, support: map[string]*metadata.TaskSupport{"job": {Support: metadata.TaskOptional}}}
	h := NewHandler(serverOf(tt), &Options{Sealer: testSealer, Logger: slog.New(slog.DiscardHandler),
		ServerInfo: Implementation{Name: "owner-test", Version: "1"},
		Tasks:      &TaskOptions{Store: tasks.NewMemory(nil)}})
	// As the oauth guard does: the principal from the (validated) token,
	// the token itself not passed on.
	authn := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.Header.Get("X-Test-Principal")
		r, c := caller.Ensure(r.Clone(r.Context()))
		c.SetIdentity(owner.NewPrincipalOwner(p), nil, nil)
		r.Header.Del("Authorization")
		h.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(authn)
	t.Cleanup(func() {
		srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		h.StopTasks(ctx)
	})
	s := &testServer{Server: srv, tools: ft, logs: &syncBuffer{}}

	alice := map[string]string{"Authorization": "Bearer alice-token-1", "X-Test-Principal": "oidc|iss|alice"}
	aliceRefreshed := map[string]string{"Authorization": "Bearer alice-token-2", "X-Test-Principal": "oidc|iss|alice"}
	bob := map[string]string{"Authorization": "Bearer bob-token", "X-Test-Principal": "oidc|iss|bob"}
	id := createTask(t, s, "job", nil, alice)
	env := getTask(t, s, id, bob)
	require.NotNil(t, env.Error, "another user reads the task")
	assert.Equal(t, CodeInvalidParams, env.Error.Code)
	env = getTask(t, s, id, aliceRefreshed)
	require.Nil(t, env.Error, "a refreshed token of the same user reads the task")
	assert.Equal(t, `"working"`, string(env.Result["status"]))
}
