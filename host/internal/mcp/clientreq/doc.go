// Package clientreq is the channel between a running call and its client:
// the call's [Notifier] (its notifications, its requests to the client in
// stream or input-required mode, its task once it becomes one, its
// resumable stream), sharing with the endpoint only a [Channel]; and the
// state behind it: the calls a client may cancel with
// notifications/cancelled ([Calls], keyed by [CallKey]: the client's scope
// and the request id), the requests a call sent its client that wait for
// their answer on this instance ([Waits], keyed by [WaitKey]), and the
// resumable response streams of MCP 2025-11-25 (SEP-1699): a [Store] of
// [Stream]s whose events are kept, bounded per stream, per owner and in
// all, so that a client whose connection dropped resumes with GET and
// Last-Event-ID ([ParseEventID]), and a call without a reader is cancelled
// after its grace ([ErrReaderGone]), each call running on a goroutine
// kept for the next one ([Goroutines]); and the request states of
// input-required rounds ([States]), sealed, opened and spent once here and
// in a record every instance shares ([StateLedger]).
//
// It serves what needs only those: a call's context that its client may
// cancel ([Calls.Context], [Run]) and notifications/cancelled
// ([Calls.Cancelled]); the revisions whose calls get a resumable stream
// ([Resumes]); and the GET that resumes one ([Store.ServeResume]),
// refused with 400 when no stream of that client is kept here.
//
// Package mcp decides which requests these apply to (cancel.go,
// clientreq.go and resume.go there: the scopes, the routing of a client's
// response by the instance named in its id, which requests may have a
// resumable stream) and reaches this state through the types here; this
// package knows no request.
package clientreq
