package mcp

import (
	"github.com/funcmcp/funcmcp/host/internal/mcp/clientreq"
)

// The input-required flow of MCP 2026-07-28 (SEP-2322) is package
// clientreq's: States.ReadInput reads a retried call's inputResponses and
// requestState, States.InputRequired makes the result of a call that
// asked the client something. These names keep the package's spelling.

// Members of a retried call.
const paramInputResponses = clientreq.ParamInputResponses

// The request states themselves (sealing, opening, spending once) are
// package clientreq's States.
const (
	InputStateLifetime    = clientreq.InputStateLifetime
	MaxInputResponseBytes = clientreq.MaxInputResponseBytes
)

// DefaultUsedInputStates bounds the request states this handler remembers
// as used (see clientreq.DefaultUsedInputStates).
var DefaultUsedInputStates = clientreq.DefaultUsedInputStates

// StateLedger records the request states that opened where several
// instances see them (see clientreq.StateLedger).
type StateLedger = clientreq.StateLedger

// ErrEpochChanged is the error of StateLedger.Spend for a state given in
// an epoch that is no longer the record's.
var ErrEpochChanged = clientreq.ErrEpochChanged

// inputState is what a call knows of the client's answers.
type inputState = clientreq.Input

// callIdentity is what a request state is bound to (see clientreq.Call).
type callIdentity = clientreq.Call

// compactJSON returns a copy of valid JSON on one line.
func compactJSON(v []byte) []byte { return clientreq.CompactJSON(v) }

// inputRequired answers a modern call that asked the client something with
// its input-required result, and reports whether it did. Call it after
// n.End.
func (h *handler) inputRequired(req *request, n *Notifier, id callIdentity) bool {
	body, err := h.states.InputRequired(req.r.Context(), n, id, h.modernReplies.metaOnly)
	switch {
	case err != nil:
		h.log.Error("mcp: giving a request state failed", "error", err)
		h.rpcError(req, CodeInternalError, "Internal error", nil)
	case body == nil:
		return false
	default:
		req.setOutcome("input_required")
		h.result(req, body)
	}
	return true
}
