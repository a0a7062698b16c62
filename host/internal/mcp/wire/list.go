package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
)

// PreparedArray keeps a JSON array that is handed over again and again
// as the same slice (the app's tools/list array of a revision): the first
// time a slice is seen it is checked and prepared (Prepare), and while the
// same slice comes back the prepared bytes are returned without a look.
type PreparedArray struct {
	last atomic.Pointer[preparedArray]
}

type preparedArray struct {
	src  []byte
	body []byte
	err  error
}

// Get returns raw prepared (see [PrepareArray]); fresh is true when raw
// was not the slice prepared last, so it was checked now.
func (p *PreparedArray) Get(raw []byte) (body []byte, fresh bool, err error) {
	if c := p.last.Load(); c != nil && sameSlice(c.src, raw) {
		return c.body, false, c.err
	}
	c := &preparedArray{src: raw}
	c.body, c.err = PrepareArray(raw)
	p.last.Store(c)
	return c.body, true, c.err
}

func sameSlice(a, b []byte) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// PrepareArray checks that raw is a JSON array and returns it as it will be
// spliced: trimmed, and compacted only when it has line breaks (which SSE
// data lines cannot carry); empty raw is [].
func PrepareArray(raw []byte) ([]byte, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return []byte("[]"), nil
	}
	if trimmed[0] != '[' || !json.Valid(trimmed) {
		return nil, errors.New("checking the tool list: not a JSON array")
	}
	if bytes.ContainsAny(trimmed, "\r\n") {
		var b bytes.Buffer
		if err := json.Compact(&b, trimmed); err != nil {
			return nil, fmt.Errorf("compacting the tool list: %w", err)
		}
		return b.Bytes(), nil
	}
	return trimmed, nil
}
