package listen

import (
	"fmt"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// TestSessionsShareTheirURIs: a URI many sessions subscribe to is kept
// once.
func TestSessionsShareTheirURIs(t *testing.T) {
	hub := notify.NewHub(notify.Limits{}, nil)
	t.Cleanup(hub.Close)
	table := NewSessions(hub, owner.Limit{}, owner.BudgetLimit{}, 0, time.Hour)
	for i := range 3 {
		uri := fmt.Sprintf("test://%s", "shared") // a copy of its own each time
		require.NoError(t, table.Subscribe(Session{ID: fmt.Sprint("s", i)}, owner.Address("127.0.0.1:1"), owner.Address("127.0.0.1:1"), uri))
	}
	table.mu.Lock()
	defer table.mu.Unlock()
	require.Len(t, table.uris, 1)
	var first *byte
	for _, e := range table.m {
		p := unsafe.StringData(e.uris[0])
		if first == nil {
			first = p
		}
		assert.Same(t, first, p, "one copy of the URI")
	}
}
