//go:build !unix

package config

// openNonBlocking: no named pipes to wait on here.
const openNonBlocking = 0
