package tasks

import (
	"context"
	"encoding/json"
	"sync"
)

// resultCacheBytes bounds the results the Azure store keeps after reading
// them, so that readers of one result share one copy.
const resultCacheBytes = 64 << 20

// resultCache shares the results the Azure store reads from blobs. A
// result blob is written once under a new name and never changed, so a
// result read once is the result of that name for good: readers of the
// same blob at the same time share one download, and the results read
// last are kept (within resultCacheBytes, the oldest going first) for the
// readers that come next. Each tasks/get of a large result once downloaded
// a copy of its own: 24 readers of a 30 MB result held 24 copies.
type resultCache struct {
	mu      sync.Mutex
	loading map[string]*resultLoad
	kept    map[string]json.RawMessage
	order   []string // kept names, the oldest first
	bytes   int
	max     int
}

type resultLoad struct {
	done chan struct{}
	data json.RawMessage
	err  error
}

func newResultCache(max int) *resultCache {
	return &resultCache{loading: map[string]*resultLoad{}, kept: map[string]json.RawMessage{}, max: max}
}

// get returns the result of blob name, downloading it with load unless it
// is kept or being downloaded already.
func (c *resultCache) get(ctx context.Context, name string, load func(context.Context) (json.RawMessage, error)) (json.RawMessage, error) {
	c.mu.Lock()
	if data, ok := c.kept[name]; ok {
		c.mu.Unlock()
		return data, nil
	}
	if l, ok := c.loading[name]; ok {
		c.mu.Unlock()
		select {
		case <-l.done:
			return l.data, l.err
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	l := &resultLoad{done: make(chan struct{})}
	c.loading[name] = l
	c.mu.Unlock()

	// The download serves every reader waiting for it: one leaving does
	// not cancel it for the others.
	l.data, l.err = load(context.WithoutCancel(ctx))
	c.mu.Lock()
	delete(c.loading, name)
	if l.err == nil {
		c.keepLocked(name, l.data)
	}
	c.mu.Unlock()
	close(l.done)
	return l.data, l.err
}

func (c *resultCache) keepLocked(name string, data json.RawMessage) {
	if len(data) > c.max {
		return
	}
	for c.bytes+len(data) > c.max && len(c.order) > 0 {
		c.dropLocked(c.order[0])
	}
	c.kept[name] = data
	c.order = append(c.order, name)
	c.bytes += len(data)
}

// forget drops the result of a blob that is deleted.
func (c *resultCache) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(name)
}

func (c *resultCache) dropLocked(name string) {
	data, ok := c.kept[name]
	if !ok {
		return
	}
	delete(c.kept, name)
	c.bytes -= len(data)
	for i, n := range c.order {
		if n == name {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
}
