package wire

import (
	"bytes"
	"sync"
)

// DefaultMaxBodyBytes is the default bound of a POSTed message, on every
// transport.
const DefaultMaxBodyBytes = 4 << 20

// MaxPooled is the largest buffer kept for reuse.
const MaxPooled = 64 << 10

var bufferPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// GetBuffer returns an empty buffer from the pool; give it back with
// [PutBuffer].
func GetBuffer() *bytes.Buffer { return bufferPool.Get().(*bytes.Buffer) }

// PutBuffer returns b to the pool, unless it grew beyond [MaxPooled].
func PutBuffer(b *bytes.Buffer) {
	if b.Cap() > MaxPooled {
		return
	}
	b.Reset()
	bufferPool.Put(b)
}
