//go:build !race

package metadata

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAddTextCopyAllocations: finding the copy there already (the host,
// after the worker added it) allocates nothing, and adding it allocates
// the block alone, not a copy of the structured content's text too. (The
// race detector makes sync.Pool drop buffers at random: not under it.)
func TestAddTextCopyAllocations(t *testing.T) {
	sc := json.RawMessage(`{"city":"Buenos Aires","days":[{"date":"2026-03-01","high":-1.3,"note":"a \"quoted\" word"}]}`)
	withCopy := CallToolResult{Content: []json.RawMessage{TextContent(string(sc))}, StructuredContent: sc}
	if n := testing.AllocsPerRun(100, func() { AddTextCopy(&withCopy, TextCopyJSON) }); n != 0 {
		t.Errorf("finding the copy allocates %v times, want 0", n)
	}
	require.Len(t, withCopy.Content, 1)
	content := make([]json.RawMessage, 0, 2)
	if n := testing.AllocsPerRun(100, func() {
		res := CallToolResult{Content: content, StructuredContent: sc}
		AddTextCopy(&res, TextCopyJSON)
	}); n != 1 {
		t.Errorf("adding the copy allocates %v times, want 1 (the block)", n)
	}
}
