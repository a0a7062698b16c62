package worker

import (
	"context"
	"fmt"
	"net/http"

	"github.com/funcmcp/funcmcp/metadata"
)

// CloseSSEStream asks the host to end the client's response stream of this
// call now, while the tool keeps running: SSE polling (SEP-1699, MCP
// 2025-11-25). The client reconnects (GET with Last-Event-ID) and receives
// what follows, the result included, so a long call need not hold a
// connection open. It returns nil once the host has closed the stream (or
// it was closed already).
//
// The host must offer it for this call (metadata.HeaderResumable): funchost
// does when the call's response is a resumable event stream. Otherwise, and
// always under the real Azure Functions host, it returns an error wrapping
// [ErrNotSupported] (at once when nothing was offered); the tool carries on
// either way. The request is bounded by ctx, the invocation and 5 seconds.
func (tc *ToolContext) CloseSSEStream(ctx context.Context) error {
	n := tc.notify
	if n == nil || !n.resumable {
		return notSupported("closing the client's response stream: the host does not offer it for this call")
	}
	body, err := metadata.Marshal(&metadata.Notification{Type: metadata.NotificationCloseStream})
	if err != nil {
		return fmt.Errorf("closing the client's response stream: %w", err)
	}
	n.mu.Lock()
	status, err := n.postLocked(ctx, body)
	if err == nil && status >= 300 && status != http.StatusConflict && status != http.StatusBadRequest {
		n.broken = true // 401, 404 (the call ended), …: the channel is gone
	}
	n.mu.Unlock()
	switch {
	case err != nil:
		return fmt.Errorf("closing the client's response stream: %w", err)
	case status == http.StatusNoContent || status == http.StatusOK:
		return nil
	case status == http.StatusConflict:
		return notSupported("closing the client's response stream: the host cannot, the stream of this call is not resumable")
	}
	return fmt.Errorf("closing the client's response stream: the host answered %d %s", status, http.StatusText(status))
}

// notSupported is an error that says what is not supported, and matches
// [ErrNotSupported] with errors.Is.
type notSupported string

func (e notSupported) Error() string { return string(e) }
func (e notSupported) Unwrap() error { return ErrNotSupported }
