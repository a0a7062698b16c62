// Package oauth makes the MCP endpoints an OAuth 2.1 resource server, as
// the MCP authorization chapters (2025-06-18 on) ask.
//
// [Load] reads the app settings (FUNCMCP_AUTH_ISSUER and its companions);
// a [Verifier] validates access tokens (JWTs) with golang-jwt and the
// issuer's keys, found by OpenID discovery and kept by MicahParks/keyfunc:
// asymmetric algorithms only, iss exact (or a Microsoft Entra ID
// {tenantid} issuer with an accepted-tenant list), aud one of the accepted
// audiences, exp required, exp and nbf with [Leeway], a size bound, keys
// fetched again on an unknown key id (logged "unknown signing key id …;
// refreshing the issuer's keys") at most once per [KeyRefreshEvery], one
// fetch at a time.
// A [Guard] serves the protected resource metadata (RFC 9728), answers
// requests without a valid token 401 with a WWW-Authenticate challenge
// naming the metadata, and requests for an operation whose scopes the token
// lacks 403 insufficient_scope (step-up). It puts the principal on the
// request context (owner.WithPrincipal) and replaces the Authorization
// header with the identity headers App Service authentication gives apps
// (X-MS-CLIENT-PRINCIPAL…), which the worker reads.
package oauth
