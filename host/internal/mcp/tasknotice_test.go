package mcp

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/host/internal/tasks"
	"github.com/funcmcp/funcmcp/metadata"
)

// TestListenersShareOneTaskResult: listeners of one task with a large
// result, those hearing it complete and those opening after, write one
// encoding of it (16 MiB: more than loopback sockets buffer, so every
// listener still writes it when the last one takes it).
func TestListenersShareOneTaskResult(t *testing.T) {
	const listeners = 4
	text := strings.Repeat("x", 16<<20)
	release := make(chan struct{})
	hub := notify.NewHub(notify.Limits{}, nil)
	defer hub.Close()
	var h *handler
	s := taskServerWith(t, tasks.NewMemory(nil), 0, false, func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error) {
		<-release
		return &metadata.CallToolResult{Content: []json.RawMessage{metadata.TextContent(text)}}, nil
	}, func(hd *handler) {
		h = hd
		hd.hub = hub
		hd.tasks.Publish(hub)
	})
	id := createTask(t, s, "job", map[string]any{}, nil)
	writing := h.shared.Writers
	listen := func() *eventStream {
		st := open(t, http.MethodPost, s.URL, listenBody("T", map[string]any{"taskIds": []string{id}}, tasksCaps), modernHeaders(methodListen, ""))
		st.next(t) // the acknowledgement
		return st
	}
	readCompleted := func(st *eventStream) {
		t.Helper()
		for {
			data := st.next(t)
			require.NotEmpty(t, data)
			if strings.Contains(data[:min(len(data), 512)], `"status":"completed"`) {
				assert.Contains(t, data[len(data)-1024:], `xxx"}],`)
				assert.Greater(t, len(data), len(text))
				return
			}
		}
	}

	var heard []*eventStream
	for range listeners {
		st := listen()
		st.next(t) // the task as it is: working
		heard = append(heard, st)
	}
	close(release)
	require.Eventually(t, func() bool { return writing() == listeners }, 20*time.Second, 5*time.Millisecond,
		"every listener writes the completed task")
	assert.Equal(t, int64(1), h.shared.Encodes(), "the result is encoded once for all")
	for _, st := range heard {
		readCompleted(st)
	}
	require.Eventually(t, func() bool { return writing() == 0 }, 20*time.Second, 5*time.Millisecond)

	var later []*eventStream
	for range listeners {
		later = append(later, open(t, http.MethodPost, s.URL, listenBody("T", map[string]any{"taskIds": []string{id}}, tasksCaps), modernHeaders(methodListen, "")))
	}
	require.Eventually(t, func() bool { return writing() == listeners }, 20*time.Second, 5*time.Millisecond,
		"every listener opening writes the task as it is")
	assert.Equal(t, int64(2), h.shared.Encodes(), "once more for those opening after")
	for _, st := range later {
		st.next(t)
		readCompleted(st)
	}
	assert.Zero(t, h.shared.Kept(), "nothing is kept once written")
}
