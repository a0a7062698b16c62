// Package caller is the one record of who sent a request: the [Caller],
// made once per request at the host's edge and filled as the request
// passes the edge's steps.
//
//   - The edge makes it ([New], [Attach]) with the client address: the
//     connection's, or behind a trusted front end the one its
//     X-Forwarded-For names (owner.Proxies.Client).
//   - The OAuth guard sets the verified identity ([Caller.SetIdentity]):
//     the access token's principal with its owner ID, worked out once per
//     token, the identity itself (its scopes, its identity headers
//     encoded once) and the identity headers the request now carries.
//   - The function key link sets the owner of the key it checked
//     ([Caller.SetKey]).
//
// The MCP endpoint reads it once, when it makes a request's exchange
// ([Of]); every later step (the scope check, quotas, tasks, the
// invocation of the worker) reads the record's typed fields, never the
// context. The package owns the record's context key and its only
// accessors: no other package of the host passes anything about the
// caller on a context.
//
// The record is filled by the links in front of the endpoint, one after
// the other on the request's goroutine, and only read after them: it is
// not safe to change once the endpoint has read it.
package caller
