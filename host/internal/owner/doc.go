// Package owner names who a thing a client leaves behind belongs to, and
// counts what each owner holds against a per-owner and a global limit.
//
// An owner is the most specific VERIFIED identity a request has: the
// authenticated principal (set on the context by the authorization link,
// see [WithPrincipal]), else the function key the host checked (set by the
// key link, see [WithVerifiedKey]), else its client address. Nothing a
// client merely sends names an owner: an Authorization header nobody
// checked, a key of an app that checks none, an Mcp-Session-Id. So every
// unauthenticated request of one address is one owner, and the per-owner
// limits are per-address limits for them, whatever they send.
//
// The client address is the connection's, unless the connection comes
// from a trusted front end ([Proxies], the app setting
// [SettingTrustedProxies]): then it is the rightmost address of
// X-Forwarded-For that is not a trusted front end.
//
// Tasks, kept results, resumable streams, connections, listeners and
// pending input-required states are counted per owner with a [Counter],
// so that one owner can never take what everyone needs.
package owner
