package backplane

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMemory(t *testing.T) {
	hub := NewHub()
	testBackplane(t, NewMemory(hub, "a", HoldOptions{}, nil), NewMemory(hub, "b", HoldOptions{}, nil), "a", nil, nil)
}

func TestMemoryRefusesAnInstanceTwice(t *testing.T) {
	hub := NewHub()
	require.NoError(t, NewMemory(hub, "x", HoldOptions{}, nil).Start(t.Context(), newStreams().deliver))
	require.Error(t, NewMemory(hub, "x", HoldOptions{}, nil).Start(t.Context(), newStreams().deliver))
}
