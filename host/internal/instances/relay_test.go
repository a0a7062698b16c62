package instances

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/backplane"
	"github.com/funcmcp/funcmcp/host/internal/notify"
)

// TestRelayCarriesChangesBetweenInstances: a change one instance's relay
// broadcasts reaches the receiver of the other instance's relay, in its
// wire form, once, and not its own.
func TestRelayCarriesChangesBetweenInstances(t *testing.T) {
	hub := backplane.NewHub()
	la, lb := &Legacy{}, &Legacy{}
	ma := backplane.NewMemory(hub, "relaya", backplane.HoldOptions{}, nil)
	mb := backplane.NewMemory(hub, "relayb", backplane.HoldOptions{}, nil)
	ma.OnBroadcast, mb.OnBroadcast = la.onBroadcast, lb.onBroadcast
	la.relay.bp, lb.relay.bp = ma, mb
	for _, m := range []*backplane.Memory{ma, mb} {
		require.NoError(t, m.Start(t.Context(), func(_ context.Context, _ backplane.Message) backplane.Outcome { return backplane.Gone }))
		defer m.Stop(t.Context())
	}
	var ra, rb chan []byte = make(chan []byte, 4), make(chan []byte, 4)
	wire, err := notify.Encode(notify.Change{Kind: notify.ResourceUpdated, URI: "note://today"})
	require.NoError(t, err)

	la.relay.receive(func(w []byte) { ra <- w })
	lb.relay.receive(func(w []byte) { rb <- w })
	var relay notify.Relay = &la.relay
	require.NoError(t, relay.Broadcast(t.Context(), wire))
	select {
	case got := <-rb:
		c, err := notify.Decode(got)
		require.NoError(t, err)
		assert.Equal(t, "note://today", c.URI)
	case <-time.After(10 * time.Second):
		t.Fatal("the change did not reach the other instance")
	}
	assert.Empty(t, ra, "not the sender")
	assert.Empty(t, rb, "once")
}
