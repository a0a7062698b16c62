package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// changeRecorder is funchost's change channel as the worker sees it; it
// answers receipt.
type changeRecorder struct {
	mu      sync.Mutex
	got     []metadata.Change
	receipt metadata.ChangeReceipt
}

func offerChangeChannel(t *testing.T) *changeRecorder {
	t.Helper()
	rec := &changeRecorder{receipt: metadata.ChangeReceipt{Delivery: metadata.DeliverySent}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var c metadata.Change
		data, _ := io.ReadAll(r.Body)
		if r.Header.Get("Authorization") != "Bearer key" || json.Unmarshal(data, &c) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		rec.mu.Lock()
		rec.got = append(rec.got, c)
		receipt := rec.receipt
		rec.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(receipt)
	}))
	t.Cleanup(srv.Close)
	t.Setenv(metadata.EnvChangesURL, srv.URL+"/changes")
	t.Setenv(metadata.EnvChangesKey, "key")
	return rec
}

func (rec *changeRecorder) changes() []metadata.Change {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]metadata.Change(nil), rec.got...)
}

// readPinned reads note://pinned through the handler.
func readPinned(t *testing.T, base string) (text string, revision int) {
	t.Helper()
	value, _ := json.Marshal(`{"uri":"note://pinned"}`)
	resp, err := http.Post(base+"/note_pinned", "application/json", strings.NewReader(`{"Data":{"context":`+string(value)+`}}`))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var out metadata.InvocationResponse
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	var envelope string
	require.NoError(t, json.Unmarshal(out.ReturnValue, &envelope))
	var wrapped struct{ Content string } // the extension's resource envelope
	require.NoError(t, json.Unmarshal([]byte(envelope), &wrapped), envelope)
	var res struct{ URI, Text string }
	require.NoError(t, json.Unmarshal([]byte(wrapped.Content), &res), envelope)
	assert.Equal(t, "note://pinned", res.URI)
	var note struct {
		Text     string `json:"text"`
		Revision int    `json:"revision"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Text), &note))
	return note.Text, note.Revision
}

// TestPinNoteAnnounces: under funchost, pin_note changes the note and tells
// the host at once; the resource reads the new note.
func TestPinNoteAnnounces(t *testing.T) {
	rec := offerChangeChannel(t)
	srv := httptest.NewServer(newApp().Handler())
	defer srv.Close()
	_, before := readPinned(t, srv.URL)

	var note PinnedNote
	structured(t, callSample(t, srv.URL, "pin_note", `{"text":"Buy milk"}`, nil, "", nil), &note)
	assert.Equal(t, PinnedNote{URI: "note://pinned", Text: "Buy milk", Revision: before + 1, Announced: true, Delivery: "sent"}, note)
	assert.Equal(t, []metadata.Change{{Kind: metadata.ChangeResourceUpdated, URI: "note://pinned"}}, rec.changes())

	text, revision := readPinned(t, srv.URL)
	assert.Equal(t, "Buy milk", text)
	assert.Equal(t, before+1, revision)

	// Storage paused: funchost took the change, the other instances have
	// not got it; the result says so rather than calling it delivered.
	rec.mu.Lock()
	rec.receipt = metadata.ChangeReceipt{Delivery: metadata.DeliveryPending, Waits: metadata.WaitsBackplane}
	rec.mu.Unlock()
	structured(t, callSample(t, srv.URL, "pin_note", `{"text":"Buy bread"}`, nil, "", nil), &note)
	assert.True(t, note.Announced)
	assert.Equal(t, "pending", note.Delivery)
}

// TestPinNoteWithoutAChannel: under the Azure Functions host the note is
// pinned all the same, and the result says nobody was told.
func TestPinNoteWithoutAChannel(t *testing.T) {
	t.Setenv(metadata.EnvChangesURL, "")
	t.Setenv(metadata.EnvChangesKey, "")
	srv := httptest.NewServer(newApp().Handler())
	defer srv.Close()
	var note PinnedNote
	structured(t, callSample(t, srv.URL, "pin_note", `{"text":"Call home"}`, nil, "", nil), &note)
	assert.False(t, note.Announced)
	assert.Empty(t, note.Delivery)
	text, revision := readPinned(t, srv.URL)
	assert.Equal(t, "Call home", text)
	assert.Equal(t, note.Revision, revision)

	res := callSample(t, srv.URL, "pin_note", `{"text":""}`, nil, "", nil)
	assert.True(t, res.IsError)
	_, err := pinNote(strings.Repeat("é", maxNoteRunes+1))
	assert.ErrorContains(t, err, "1 to 1000 characters, not 1001")
	_, err = pinNote(strings.Repeat("é", maxNoteRunes))
	assert.NoError(t, err)

	done := make(chan struct{})
	go func() { tickClock(t.Context(), slog.New(slog.DiscardHandler)); close(done) }()
	select {
	case <-done: // nothing to tell: the timer does not even start
	case <-time.After(10 * time.Second):
		t.Fatal("tickClock did not return without a channel")
	}
}

func TestClockMinute(t *testing.T) {
	at := time.Date(2026, 11, 28, 3, 4, 59, 0, time.FixedZone("x", 3600))
	assert.Equal(t, "2026-11-28T02:04Z", clockMinute(at))
	tickCtx, cancel := context.WithCancel(context.Background())
	cancel()
	offerChangeChannel(t)
	tickClock(tickCtx, slog.New(slog.DiscardHandler)) // returns once its context ends
}
