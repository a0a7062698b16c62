// Package owner names who a thing a client leaves behind belongs to, and
// counts what each owner holds against a per-owner and a global limit.
//
// An owner is the most specific identity a request has: the authenticated
// principal (set on the context by the authorization link, see
// [WithPrincipal]), else a digest of its credentials (Authorization,
// x-functions-key, the code query parameter), else its MCP session, else
// its client address. Tasks, kept results, resumable streams, connections
// and pending input-required states are counted per owner with a
// [Counter], so that one owner can never take what everyone needs.
package owner
