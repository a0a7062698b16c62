package tests

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// announcedNote is the line funchost logs when the change of note://pinned
// reaches it, just before it hands the change to its listeners.
const announcedNote = `msg="Change announced by the app" kind=resourceUpdated uri=note://pinned`

// TestSampleAnnouncesTheNoteToFunchost: funchost starts the sample's worker
// with the change channel in its environment; a client calls pin_note, and
// the change reaches funchost (its log, at the seam where the listeners'
// hub takes it) by the time the call returns; the note reads the new text.
func TestSampleAnnouncesTheNoteToFunchost(t *testing.T) {
	t.Parallel()
	h := startHost(t, sample(t))
	cs := connectGoSDK(t, h.endpoint, "2025-11-25")
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()

	assert.NotContains(t, h.console.String(), announcedNote)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pin_note", Arguments: map[string]any{"text": "Buy milk"}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res.Content)
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var note struct {
		URI       string `json:"uri"`
		Text      string `json:"text"`
		Revision  int    `json:"revision"`
		Announced bool   `json:"announced"`
	}
	require.NoError(t, json.Unmarshal(data, &note))
	assert.True(t, note.Announced, "funchost took the change: %s", data)
	assert.Equal(t, 1, note.Revision)

	// The log line is written before the worker hears 204; it reaches the
	// console through funchost's stderr pipe.
	require.Eventually(t, func() bool { return strings.Contains(h.console.String(), announcedNote) },
		clientTimeout, 10*time.Millisecond, "%s", h.console.String())
	assert.Equal(t, 1, strings.Count(h.console.String(), announcedNote), "one change, announced once")

	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "note://pinned"})
	require.NoError(t, err)
	require.Len(t, read.Contents, 1)
	assert.JSONEq(t, `{"text":"Buy milk","revision":1}`, read.Contents[0].Text)
}

// TestSampleAnnouncesNothingUnderTheFunctionsHost: the Azure Functions host
// offers the worker no change channel; pin_note pins the note all the same
// and says that nobody was told.
func TestSampleAnnouncesNothingUnderTheFunctionsHost(t *testing.T) {
	t.Parallel()
	base := startHandler(t, sample(t))
	res, _ := invokeAsFunctionsHost(t, base, "pin_note", `{"text":"Call home"}`)
	require.False(t, res.IsError, "%s", resultText(res))
	var note struct {
		Text      string `json:"text"`
		Announced bool   `json:"announced"`
	}
	require.NoError(t, json.Unmarshal(res.StructuredContent, &note))
	assert.Equal(t, "Call home", note.Text)
	assert.False(t, note.Announced)
}
