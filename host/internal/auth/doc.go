// Package auth holds the host's two secrets and what it does with them.
//
// [Keys] checks the function key of a request the way the Azure Functions
// host authorises /runtime/webhooks/{extension}: the x-functions-key header
// or the code query parameter must equal the mcp_extension system key or the
// master key. Comparisons take the same time whatever the key sent.
//
// [Sealer] turns a small payload into an opaque token and back: AES-256-GCM
// with a random nonce, the token's purpose as additional data and an expiry
// inside the sealed bytes. Hosts that share the key open each other's tokens;
// a token that was changed, forged, sealed for another purpose or has expired
// does not open.
package auth
