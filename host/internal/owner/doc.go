// Package owner names who a thing a client leaves behind belongs to, and
// counts what each owner holds against a per-owner, a per-address and a
// global limit.
//
// An owner ([ID], worked out by caller.Caller.Owner from the request's
// record) is the most specific VERIFIED identity a request has: its
// verified principal (the subject of an access token the OAuth guard
// validated, [PrincipalOwner]), else the function key the host checked
// ([KeyOwner]), else its client address ([Address]). Nothing a client merely
// sends names an owner: an Authorization header nobody checked, a key of
// an app that checks none, an Mcp-Session-Id. So every unauthenticated
// request of one address is one owner, and the per-owner limits are
// per-address limits for them, whatever they send.
//
// The client address is the connection's, unless the connection comes
// from a trusted front end ([Proxies], the app setting
// [SettingTrustedProxies]): then it is the rightmost address of
// X-Forwarded-For that is not a trusted front end, which the host's edge
// names once per request ([Proxies.Client]) in the request's record.
//
// A [Counter] counts things per owner and in all ([Limit]); a [Budget]
// counts things or bytes three ways ([BudgetLimit]): per owner, per client
// address and in all. Every owner nests within the address it came from,
// so a client that makes up owners (a fresh credential a request) is still
// bounded by its address. Tasks, kept results, resumable streams,
// connections, listeners, subscriptions and pending input-required states
// are counted with them, so that one owner, or one address, can never take
// what everyone needs.
package owner
