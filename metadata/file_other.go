//go:build !unix

package metadata

// openNonBlocking: no named pipes to wait on here.
const openNonBlocking = 0
