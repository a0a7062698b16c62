//go:build !race

package bufpool

import "testing"

// TestBufferAllocationsAreUsedAgain: a buffer put back is what the next
// Get of a size it holds returns; one larger than Max is not kept. (The
// race detector makes sync.Pool drop buffers at random: make allocs runs
// it without.)
func TestBufferAllocationsAreUsedAgain(t *testing.T) {
	p := &Pool{Max: 4096}
	b := append(p.Get(2048), 'x')
	p.Put(b)
	if c := p.Get(2000); &c[:1][0] != &b[0] {
		t.Error("the buffer put back was not used again")
	}
	big := &Pool{Max: 64}
	b = append(big.Get(128), 'x')
	big.Put(b)
	if c := big.Get(100); &c[:1][0] == &b[0] {
		t.Error("a buffer over Max was kept")
	}
}
