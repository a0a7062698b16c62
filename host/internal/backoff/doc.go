// Package backoff is the host's one rule for waiting before trying again:
// [Sleep] waits unless a context ends first, and [Doubling] is the capped
// exponential back-off (first, 2×first, 4×first, … up to a maximum) that the
// worker supervisor and the storage-queue backplane use.
package backoff
