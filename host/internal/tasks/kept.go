package tasks

import (
	"container/heap"
	"sync"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// keptCount counts the tasks one instance made that have not expired, per
// owner and in all, and gives each back when it expires: the bound of a
// store whose records live elsewhere (the Azure store keeps no record in
// memory, only this count).
type keptCount struct {
	c       *owner.Counter
	now     func() time.Time
	mu      sync.Mutex
	pending releaseHeap
	timer   *time.Timer
	timerAt time.Time
}

func newKeptCount(now func() time.Time, perOwner, global int64) *keptCount {
	return &keptCount{c: owner.NewCounter("kept tasks", SettingMaxTasksPerOwner, owner.Limit{PerOwner: perOwner, Global: global}), now: now}
}

// take counts one task of id until expires, or refuses with an
// *owner.LimitError; release gives it back at once (a task not stored).
func (k *keptCount) take(id owner.ID, expires time.Time) (release func(), err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.expireLocked()
	rel, err := k.c.Take(id, 1)
	if err != nil {
		return nil, err
	}
	heap.Push(&k.pending, pendingRelease{at: expires, release: rel})
	if k.timerAt.IsZero() || expires.Before(k.timerAt) {
		k.timerAt = expires
		d := max(expires.Sub(k.now()), 0)
		if k.timer == nil {
			k.timer = time.AfterFunc(d, k.onTimer)
		} else {
			k.timer.Reset(d)
		}
	}
	return rel, nil // released twice (now and at expiry) counts once
}

func (k *keptCount) expireLocked() {
	now := k.now()
	for len(k.pending) > 0 && !now.Before(k.pending[0].at) {
		heap.Pop(&k.pending).(pendingRelease).release()
	}
}

func (k *keptCount) onTimer() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.expireLocked()
	k.timerAt = time.Time{}
	if len(k.pending) > 0 {
		k.timerAt = k.pending[0].at
		k.timer.Reset(max(k.timerAt.Sub(k.now()), 0))
	}
}

type pendingRelease struct {
	at      time.Time
	release func()
}

// releaseHeap orders pending releases by time, the soonest first.
type releaseHeap []pendingRelease

func (h releaseHeap) Len() int           { return len(h) }
func (h releaseHeap) Less(i, j int) bool { return h[i].at.Before(h[j].at) }
func (h releaseHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *releaseHeap) Push(x any)        { *h = append(*h, x.(pendingRelease)) }
func (h *releaseHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
