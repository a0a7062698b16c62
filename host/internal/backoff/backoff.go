package backoff

import (
	"context"
	"time"
)

// Sleep waits d and reports true, or reports false as soon as ctx ends. A d
// of zero or less does not wait: it reports whether ctx is still live.
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// Doubling hands out the waits of a capped exponential back-off: First,
// then twice the last wait each time, never more than Max. The zero value
// waits nothing. It is not safe for concurrent use.
type Doubling struct {
	First, Max time.Duration
	n          int // waits handed out since the last Reset
}

// Next returns the next wait.
func (b *Doubling) Next() time.Duration {
	if b.First <= 0 {
		return 0
	}
	d := b.First
	for i := 0; i < b.n && d < b.Max; i++ {
		if d > b.Max/2 {
			d = b.Max // doubling would pass the cap (or overflow)
			break
		}
		d *= 2
	}
	if d < b.Max {
		b.n++ // once at the cap, n stops growing
	}
	return min(d, b.Max)
}

// Reset starts again from First.
func (b *Doubling) Reset() { b.n = 0 }
