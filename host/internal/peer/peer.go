// Package peer is the contract of a running call's client end, between
// the MCP front (package mcp, whose *mcp.Notifier keeps it) and the call
// channel back from the worker (package invoke, whose hub serves it to the
// worker): the [Notifier] interface, and the errors a Notifier answers
// with, which the hub turns into the status codes the worker reads. Both
// sides import this package and neither imports the other.
package peer

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/funcmcp/funcmcp/metadata"
)

// Notifier is the client's end of one call: where the notifications and
// requests of its invocation go. A nil *mcp.Notifier is one that wants
// nothing.
type Notifier interface {
	WantsProgress() bool
	LogLevel() (level string, ok bool)
	Progress(progress, total float64, message string) error
	Log(level, logger string, data json.RawMessage) error
	// RequestMode is metadata.InputModeStream or InputModeInputRequired
	// when the call may ask the client something, "" otherwise.
	RequestMode() string
	// ClientCapabilities is the client's capabilities object.
	ClientCapabilities() json.RawMessage
	// InputResponses are the answers the client brought back, nil when none.
	InputResponses() json.RawMessage
	// Request asks the client: elicitation/create, sampling/createMessage
	// or roots/list, key naming the request within the call.
	Request(ctx context.Context, key, method string, params json.RawMessage) (*metadata.RequestReply, error)
	// Resumable reports whether CloseStream can work; CloseStream ends the
	// client's response stream while the call goes on (SSE polling).
	Resumable() bool
	CloseStream() error
	// TaskState is metadata.TaskStateRunning, TaskStateOffered or "";
	// StartTask makes an offered call a task.
	TaskState() string
	StartTask(ctx context.Context) (*metadata.StartTaskReply, error)
}

// Errors of a [Notifier]'s notifications.
var (
	// ErrNotRequested: the client did not ask for this notification (no
	// progressToken, or a log level below the one it asked for). It is
	// dropped, as MCP requires.
	ErrNotRequested = errors.New("the client did not ask for this notification")
	// ErrCallEnded: the call's result was already sent.
	ErrCallEnded = errors.New("the call has ended")
	// ErrProgressNotIncreasing: MCP requires progress to increase with
	// each notification.
	ErrProgressNotIncreasing = errors.New("progress must increase with each notification")
	// ErrBadLogLevel: not one of the MCP log levels.
	ErrBadLogLevel = errors.New("unknown log level")
)

// Errors of [Notifier.Request].
var (
	// ErrNoClientRequests: this call cannot ask its client anything (a
	// client that declared none of the capabilities, or that accepts no
	// stream).
	ErrNoClientRequests = errors.New("the client cannot be asked anything during this call")
	// ErrBadClientRequest: the request is not one a call may send.
	ErrBadClientRequest = errors.New("bad request to the client")
)
