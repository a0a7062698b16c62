package bufpool

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestGetHoldsWhatIsAsked: a buffer is empty and holds n bytes, kept or
// new, and one larger than Max is not kept.
func TestGetHoldsWhatIsAsked(t *testing.T) {
	p := &Pool{Max: 1024}
	for _, n := range []int{0, 10, 512, 1024, 4096} {
		b := p.Get(n)
		assert.Zero(t, len(b))
		assert.GreaterOrEqual(t, cap(b), n)
		p.Put(append(b, make([]byte, n)...))
	}
}
