package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/funcmcp/funcmcp/worker"
)

// noteURI is the resource pin_note changes.
const noteURI = "note://pinned"

// clockURI is the resource the clock timer announces every minute.
const clockURI = "clock://utc/minute"

// maxNoteRunes bounds a pinned note.
const maxNoteRunes = 1000

// PinNoteInput is pin_note's arguments.
type PinNoteInput struct {
	Text string `json:"text" jsonschema:"The note's text, 1 to 1000 characters."`
}

// PinnedNote is the pinned note: pin_note's result and the note://pinned
// resource.
type PinnedNote struct {
	URI      string `json:"uri"`
	Text     string `json:"text"`
	Revision int    `json:"revision" jsonschema:"0 before the first note is pinned, then one more with each note."`
	// Announced and Delivery are set in pin_note's result only.
	Announced bool   `json:"announced" jsonschema:"Whether the host took the announcement: the clients subscribed to note://pinned on its instance hear of it (at once, or at the host's rate); delivery says whether it went on to the other instances. False under the Azure Functions host, which has no channel for it."`
	Delivery  string `json:"delivery,omitempty" jsonschema:"What the host had done with the announcement when it answered: sent (its backplane took it for every other instance), pending (taken, not yet sent to the other instances: it waits its turn, or storage did not confirm it in time; it may still reach them, or not) or missed (the other instances, or some of them, never hear of it). Absent when nothing was announced."`
}

// pinned is the note this process holds (each instance of the app holds
// its own).
var pinned struct {
	sync.Mutex
	note PinnedNote
}

// pinNote replaces the pinned note.
func pinNote(text string) (PinnedNote, error) {
	if n := utf8.RuneCountInString(text); n == 0 || n > maxNoteRunes {
		return PinnedNote{}, fmt.Errorf("a note is 1 to %d characters, not %d", maxNoteRunes, n)
	}
	pinned.Lock()
	defer pinned.Unlock()
	pinned.note = PinnedNote{URI: noteURI, Text: text, Revision: pinned.note.Revision + 1}
	return pinned.note, nil
}

// readNote is note://pinned's contents.
func readNote() (string, error) {
	pinned.Lock()
	note := pinned.note
	pinned.Unlock()
	data, err := json.Marshal(struct {
		Text     string `json:"text"`
		Revision int    `json:"revision"`
	}{note.Text, note.Revision})
	return string(data), err
}

func registerNote(app *worker.App) {
	app.ConfigureMcpResource(noteURI).
		WithName("pinned-note").
		WithTitle("Pinned note").
		WithDescription("The note pinned with pin_note, with its revision; subscribe to hear when it changes.").
		WithMimeType("application/json").
		Handle(func(context.Context, *worker.ResourceContext) (*worker.ResourceResult, error) {
			data, err := readNote()
			if err != nil {
				return nil, err
			}
			return worker.TextResource(data), nil
		})

	//docs:begin pin
	worker.AddTool(app, "pin_note", func(ctx context.Context, tc *worker.ToolContext, in PinNoteInput) (*worker.Result, PinnedNote, error) {
		note, err := pinNote(in.Text)
		if err != nil {
			return nil, PinnedNote{}, err
		}
		// Tell the clients subscribed to note://pinned, at once, and say
		// how far the announcement got.
		switch a, err := worker.AnnounceResourceUpdated(ctx, noteURI); {
		case err == nil:
			note.Announced, note.Delivery = true, string(a.Delivery)
		case errors.Is(err, worker.ErrNotSupported): // the Azure Functions host
		default:
			tc.Logf("the note is pinned, but not announced: %v", err)
		}
		return nil, note, nil
	}).
		WithTitle("Pin a note").
		WithDescription("Pin a note: it becomes the note://pinned resource, and the clients subscribed to that resource are told at once.")
	//docs:end pin

	app.ConfigureMcpResource(clockURI).
		WithName("utc-minute").
		WithTitle("The minute, UTC").
		WithDescription("The current minute in UTC (YYYY-MM-DDTHH:MMZ); a timer of the app announces a change every minute.").
		WithMimeType("text/plain").
		Handle(func(context.Context, *worker.ResourceContext) (*worker.ResourceResult, error) {
			return worker.TextResource(clockMinute(time.Now())), nil
		})
}

// clockMinute is clock://utc/minute's text at t.
func clockMinute(t time.Time) string { return t.UTC().Format("2006-01-02T15:04Z") }

// tickClock announces that clock://utc/minute changed at the start of
// every minute, until ctx ends: a change that comes from no invocation.
// Under a host with no channel for changes it returns at once.
//
//docs:begin clock
func tickClock(ctx context.Context, log *slog.Logger) {
	if !worker.CanNotifyChanges() {
		return // the Azure Functions host: nobody to tell
	}
	for {
		now := time.Now()
		next := now.Truncate(time.Minute).Add(time.Minute)
		select {
		case <-ctx.Done():
			return
		case <-time.After(next.Sub(now)):
		}
		if err := worker.NotifyResourceUpdated(ctx, clockURI); err != nil {
			log.Warn("announcing the minute", "error", err)
		}
	}
}

//docs:end clock
