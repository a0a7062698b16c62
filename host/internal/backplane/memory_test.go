package backplane

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMemory(t *testing.T) {
	ctx := t.Context()
	hub := NewHub()
	a, b := NewMemory(hub, "a"), NewMemory(hub, "b")
	got := newCollector()
	require.NoError(t, a.Start(ctx, got.deliver))
	require.NoError(t, b.Start(ctx, func(context.Context, Message) {}))
	require.Error(t, NewMemory(hub, "a").Start(ctx, got.deliver), "one instance id, twice")

	for i := range 3 {
		require.NoError(t, b.Send(ctx, "a", msg(i)))
	}
	msgs := got.snapshot()
	require.Len(t, msgs, 3)
	for i, m := range msgs {
		assert.Equal(t, msg(i).ID, m.ID)
	}
	require.ErrorIs(t, b.Send(ctx, "nobody", msg(9)), ErrUnknownInstance)
	require.NoError(t, a.Stop(ctx))
	require.ErrorIs(t, b.Send(ctx, "a", msg(9)), ErrUnknownInstance)
}
