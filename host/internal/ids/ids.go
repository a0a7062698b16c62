package ids

import (
	"crypto/rand"
	"fmt"
	"strings"
)

// Alphabets of [Random].
const (
	// LowerAlnum is a–z and 0–9: MCP session and SSE client ids, like the
	// extension's client ids.
	LowerAlnum = "abcdefghijklmnopqrstuvwxyz0123456789"
	// Base32Lower is the RFC 4648 base32 alphabet in lower case (a–z,
	// 2–7): host instance ids, which name storage queues.
	Base32Lower = "abcdefghijklmnopqrstuvwxyz234567"
	// Base32 is the RFC 4648 base32 alphabet (A–Z, 2–7), as crypto/rand.Text
	// writes it: backplane message ids.
	Base32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
)

// Random returns n characters drawn uniformly from alphabet (2 to 256
// single-byte characters): random bytes that would favour some characters
// are rejected.
func Random(alphabet string, n int) string {
	if len(alphabet) < 2 || len(alphabet) > 256 {
		panic(fmt.Sprintf("ids: an alphabet of %d characters", len(alphabet)))
	}
	// The largest multiple of the alphabet's size that fits in a byte's
	// 256 values: bytes at or above it are drawn again.
	limit := 256 - 256%len(alphabet)
	out := make([]byte, 0, n)
	var pool [32]byte
	for len(out) < n {
		_, _ = rand.Read(pool[:]) // never fails (crypto/rand)
		for _, b := range pool {
			if int(b) >= limit {
				continue
			}
			out = append(out, alphabet[int(b)%len(alphabet)])
			if len(out) == n {
				break
			}
		}
	}
	return string(out)
}

// GUID returns a random (version 4) GUID in lower-case hex, 36 characters:
// xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx.
func GUID() string {
	return string(AppendGUID(make([]byte, 0, 36)))
}

// AppendGUID appends a random GUID, as [GUID] returns it, to dst.
func AppendGUID(dst []byte) []byte {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hex = "0123456789abcdef"
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			dst = append(dst, '-')
		}
		dst = append(dst, hex[c>>4], hex[c&0x0f])
	}
	return dst
}

// Is reports whether s is n characters of alphabet: the form of an id
// [Random] made, checked before the id costs anything (a storage read, a
// log line).
func Is(s, alphabet string, n int) bool {
	if len(s) != n {
		return false
	}
	for i := range len(s) {
		if strings.IndexByte(alphabet, s[i]) < 0 {
			return false
		}
	}
	return true
}
