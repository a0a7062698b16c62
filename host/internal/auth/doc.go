// Package auth holds the host's secrets and what it does with them.
//
// [Resolve] finds them once at start: the function keys (the host's
// options, else FUNCHOST_MASTER_KEY / FUNCHOST_MCP_EXTENSION_KEY from the
// environment or local.settings.json, else [KeysFile] under the script
// root, generated on first use with mode 0600) as host.json's
// webhookAuthorizationLevel needs them, and the session key (options, else
// WEBSITE_AUTH_ENCRYPTION_KEY or CONTAINER_ENCRYPTION_KEY, else a random key
// of the process). [Secrets.RequireKey] is the middleware that answers 401
// to a request without a key; a request it lets through carries the owner
// of its key in its record (caller.Caller.SetKey), so a checked key names its holders'
// owner, and a key sent to an Anonymous app, which checks none, names no
// owner.
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
