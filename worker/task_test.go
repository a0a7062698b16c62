package worker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

func TestWithTaskSupport(t *testing.T) {
	a := New(nil)
	noop := func(context.Context, *ToolContext) (*Result, error) { return TextResult("ok"), nil }
	a.ConfigureMcpTool("long").WithTaskSupport(TaskRequired, &TaskOptions{TTL: time.Hour, PollInterval: 2 * time.Second}).Handle(noop)
	a.ConfigureMcpTool("plain").Handle(noop)
	fns, err := a.Functions()
	require.NoError(t, err)
	byName := map[string]*metadata.Function{}
	for _, f := range fns {
		byName[f.Name] = f
	}
	text, ok := byName["long"].Bindings[0].LookupString(metadata.KeyTask)
	require.True(t, ok)
	assert.JSONEq(t, `{"support":"required","ttlMs":3600000,"pollIntervalMs":2000}`, text)
	_, ok = byName["plain"].Bindings[0].LookupString(metadata.KeyTask)
	assert.False(t, ok, "no key without a declaration")

	tool, err := binding.LoadTool(byName["long"], byName["long"].Bindings[0], "")
	require.NoError(t, err)
	require.NotNil(t, tool.Trigger.Task)
	assert.Equal(t, &metadata.TaskSupport{Support: "required", TTLMs: 3600000, PollIntervalMs: 2000}, tool.Trigger.Task)

	bad := New(nil)
	bad.ConfigureMcpTool("x").WithTaskSupport("sometimes", nil).Handle(noop)
	err = bad.Build()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `task: support "sometimes" is not "optional" or "required"`)
	assert.True(t, errors.Is(err, ErrOutputSetting))

	fn := byName["long"]
	fn.Bindings[0].SetString(metadata.KeyTask, `{"support":"optional","extra":1}`)
	_, err = binding.LoadTool(fn, fn.Bindings[0], "")
	assert.ErrorContains(t, err, "task must be a string holding")
}
