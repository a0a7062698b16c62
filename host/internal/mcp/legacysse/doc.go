// Package legacysse is the HTTP+SSE transport of MCP 2024-11-05, served over
// the Streamable HTTP endpoint of package mcp, which it meets only through
// [Endpoint]: decode a message's route, serve a message of a stream, open a
// stream's listener, render a change it heard.
//
// [Transport.ServeStream] opens a stream whose first event is "endpoint"
// with "message?azmcpcs=<sealed client|instance>[&code=<key>]";
// [Transport.ServeMessage] answers a POST there with 202 and runs the
// message (through the endpoint, as an application/json request carrying
// the stream's GET headers and the Mcp-Session-Id its initialize minted,
// with the stream's [Origin] — its scope, writer and listener — passed in
// the open, not in context keys) on the stream's goroutine, one at a time,
// writing each reply as an "event: message"; only notifications/cancelled
// (and a client's response to a request of a call) runs at once, so that it
// reaches the call it names, in the stream's context and scope. A request
// id the stream already ran is dropped. The transport decodes each message
// once, with the endpoint's decoder ([Endpoint.Route]), where it arrives
// (a POST, or a delivery from another instance): that one pass refuses a
// body that is not JSON, and the route it reads waits with the message in
// the inbox.
//
// It owns the open streams and what waits for them: the inboxes, bounded
// in messages ([Options.Inbox]) and bytes, per stream and per host; an idle
// stream's inbox and id window are made on first use, and keep-alives come
// from a timer. Messages for a stream on another instance go to a
// [Forwarder]; the backplane hands them back through [Transport.Deliver].
// A stream opened behind the access token check seals its principal's
// owner ID in the client state, and a message from anyone else is answered
// as a client state that does not open.
package legacysse
