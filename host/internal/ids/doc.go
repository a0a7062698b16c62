// Package ids makes the host's random identifiers from one source
// (crypto/rand): [Random] draws n characters uniformly from an alphabet
// (client, session, instance and message ids), [GUID] formats a random
// version-4 GUID (worker and invocation ids, as the Functions host sends
// them).
//
// Keys and bearer tokens are secrets, not ids: they are made where they
// are used, from 32 random bytes.
package ids
