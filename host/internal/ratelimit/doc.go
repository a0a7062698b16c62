// Package ratelimit is the link of the MCP chain that limits how often
// each client may ask: a token bucket per owner (every request,
// notification and GET stream) and one per owner and tool (tools/call).
// Past a bucket, the exchange is refused with HTTP 429, a Retry-After in
// whole seconds (rounded up) and a JSON-RPC error naming the limit.
//
// The owner is the exchange's ([mcp.Exchange.Owner]: the verified
// principal or function key, else the client address), so a client cannot
// make up owners without credentials; a tool is counted under the app's
// own name for it, never a name the client made up. The buckets are
// bounded: a bucket that has refilled (its owner is idle) carries nothing
// and is dropped, and at most [Options.MaxBuckets] are kept; past that, a
// new owner is refused until buckets refill.
//
// Both limits are off unless their settings are set
// (FUNCMCP_RATE_PER_OWNER, FUNCMCP_RATE_PER_TOOL; see
// docs/configuration.md): a right rate depends on the app and on whether
// a front end already limits, and a default would throttle clients that
// share an address behind a front end nobody named as trusted.
package ratelimit
