// Package oauth makes the MCP endpoints an OAuth 2.1 resource server, as
// the MCP authorization chapters (2025-06-18 on) ask.
//
// [Load] reads the app settings (FUNCMCP_AUTH_ISSUER and its companions);
// a [Verifier] validates access tokens (JWTs) with golang-jwt and the
// issuer's keys, found by OpenID discovery and kept by MicahParks/keyfunc:
// asymmetric algorithms only, iss exact (or a Microsoft Entra ID
// {tenantid} issuer with an accepted-tenant list), aud one of the accepted
// audiences, exp required, exp and nbf with [Leeway], a size bound
// ([MaxTokenBytes]). The keys are fetched every [KeyRefreshInterval] and
// again on an unknown key id (logged "unknown signing key id …; refreshing
// the issuer's keys"), one fetch at a time and at most once per
// [KeyRefreshEvery] (5 s): a floor, so that a flood of made-up key ids
// costs the issuer one request per period, while a token with an unknown
// key id within it is refused without a fetch. A validated token is
// remembered for [CacheFor] (never past its exp).
//
// A [Guard] serves the protected resource metadata (RFC 9728) and, in
// [Guard.Protect], answers a request without a valid token 401 with a
// WWW-Authenticate challenge naming the metadata; it never reads the body.
// Whether the token grants the scopes what a request names requires is
// decided behind it, once, on the request as the endpoint decoded it (the
// host's scope link of the MCP chain), which refuses with the headers of
// [Guard.InsufficientScope]: 403 insufficient_scope (step-up). A request let through has the
// principal and the [Identity] in its record (caller.Caller, which the
// host's edge made), and the identity headers App Service authentication
// gives apps (X-MS-CLIENT-PRINCIPAL…, which the worker reads) in place of
// the Authorization header, which is never passed on; the identity encodes
// its headers once per token ([Identity.EncodedHeader]) for the invocation
// body.
//
// Only a verified token sets those headers: [StripReserved] drops the ones
// a client sent ([IsReserved]), and the host calls it at its edge, for
// every request, before anything reads a header, whether or not it asks
// for tokens.
package oauth
