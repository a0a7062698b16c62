package serve

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
	"github.com/funcmcp/funcmcp/worker"
)

// TestLateHandlerOffersTheAppsToolCaller: the host reaches the app's own
// tool caller through the handler it is given before the app's handler is
// made, so that its tool calls run in process with no encoding; a handler
// that offers none (or none yet) leaves the calls to ServeHTTP.
func TestLateHandlerOffersTheAppsToolCaller(t *testing.T) {
	app := worker.New(nil)
	app.ConfigureMcpTool("ping").Handle(func(context.Context, *worker.ToolContext) (*worker.Result, error) {
		return worker.TextResult("pong"), nil
	})
	prepared, err := app.Prepare()
	require.NoError(t, err)

	l := &lateHandler{}
	assert.Nil(t, l.LocalTools(), "no handler yet")
	l.h.Store(http.NotFoundHandler())
	assert.Nil(t, l.LocalTools(), "a handler that offers none")
	l = &lateHandler{}
	l.h.Store(prepared.Handler())
	tools := l.LocalTools()
	require.NotNil(t, tools)
	d, status, _ := tools.CallToolLocal(t.Context(), &metadata.LocalToolCall{Function: "ping",
		Context: &metadata.ToolInvocationContext{Name: "ping"}, Header: http.Header{}})
	require.Equal(t, http.StatusOK, status)
	require.NotNil(t, d)
	assert.Contains(t, string(d.Result.Content[0]), "pong")
}
