package notify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// waker counts wake-ups and lets a test wait for one.
type waker struct{ ch chan struct{} }

func newWaker() *waker { return &waker{ch: make(chan struct{}, 1)} }
func (w *waker) wake() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

func listen(t *testing.T, h *Hub, who string, f Filter) (*Listener, *waker) {
	t.Helper()
	w := newWaker()
	l, err := h.Listen(ListenerOptions{Owner: owner.ID(who), TaskOwner: who, Wake: w.wake}, f)
	require.NoError(t, err)
	return l, w
}

func drain(l *Listener) []Change {
	var out []Change
	for {
		c, ok := l.Next()
		if !ok {
			return out
		}
		out = append(out, c)
	}
}

func TestHubDeliversOnlyWhatWasAsked(t *testing.T) {
	h := NewHub(Limits{}, nil)
	defer h.Close()
	tools, _ := listen(t, h, "a", Filter{ToolsListChanged: true})
	res, _ := listen(t, h, "a", Filter{Resources: []string{"note://a"}})
	task, _ := listen(t, h, "a", Filter{Tasks: []string{"t1"}})
	other, _ := listen(t, h, "b", Filter{Tasks: []string{"t1"}, PromptsListChanged: true})

	h.Publish(Change{Kind: ToolsListChanged})
	h.Publish(Change{Kind: ResourceUpdated, URI: "note://a"})
	h.Publish(Change{Kind: ResourceUpdated, URI: "note://b"})
	h.Publish(Change{Kind: TaskStatus, TaskID: "t1", Owner: "a", Task: []byte(`{}`)})
	h.Publish(Change{Kind: ResourcesListChanged})

	assert.Equal(t, []Change{{Kind: ToolsListChanged}}, drain(tools))
	assert.Equal(t, []Change{{Kind: ResourceUpdated, URI: "note://a"}}, drain(res))
	assert.Len(t, drain(task), 1)
	assert.Empty(t, drain(other), "a task of another owner, or a list not asked for, is not heard")

	res.Subscribe("note://b")
	res.Unsubscribe("note://a")
	h.Publish(Change{Kind: ResourceUpdated, URI: "note://a"})
	h.Publish(Change{Kind: ResourceUpdated, URI: "note://b"})
	assert.Equal(t, []Change{{Kind: ResourceUpdated, URI: "note://b"}}, drain(res))
}

// memRelay joins hubs as a backplane would: what one broadcasts, every
// other receives.
type memRelay struct {
	mu   sync.Mutex
	self *Hub
	all  *[]*Hub
	sent chan struct{}
}

func (r *memRelay) Broadcast(_ context.Context, wire []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, h := range *r.all {
		if h != r.self {
			if err := h.Receive(wire); err != nil {
				return err
			}
		}
	}
	r.sent <- struct{}{}
	return nil
}

func TestHubAcrossInstances(t *testing.T) {
	var hubs []*Hub
	a, b := NewHub(Limits{}, nil), NewHub(Limits{}, nil)
	hubs = append(hubs, a, b)
	sent := make(chan struct{}, 4)
	a.SetRelay(&memRelay{self: a, all: &hubs, sent: sent})
	b.SetRelay(&memRelay{self: b, all: &hubs, sent: sent})
	defer a.Close()
	defer b.Close()

	onB, wB := listen(t, b, "x", Filter{Resources: []string{"note://n"}})
	onA, _ := listen(t, a, "x", Filter{Resources: []string{"note://n"}})
	a.Publish(Change{Kind: ResourceUpdated, URI: "note://n"})
	<-wB.ch
	<-sent
	assert.Equal(t, []Change{{Kind: ResourceUpdated, URI: "note://n"}}, drain(onB), "the other instance's listener hears it")
	assert.Equal(t, []Change{{Kind: ResourceUpdated, URI: "note://n"}}, drain(onA), "once here, not again through the relay")

	assert.ErrorIs(t, b.Receive([]byte(`{"kind":"nope"}`)), ErrBadChange)
}

func TestSlowListenerIsEndedAndDropsItsQueue(t *testing.T) {
	h := NewHub(Limits{Queue: 4}, nil)
	defer h.Close()
	uris := []string{"note://1", "note://2", "note://3", "note://4", "note://5"} // distinct: equal changes merge
	slow, w := listen(t, h, "a", Filter{Resources: uris})
	fast, _ := listen(t, h, "a", Filter{Resources: uris})
	for _, u := range uris[:4] {
		h.Publish(Change{Kind: ResourceUpdated, URI: u})
		drain(fast)
	}
	require.NoError(t, slow.Err())
	h.Publish(Change{Kind: ResourceUpdated, URI: uris[4]})
	<-w.ch
	<-slow.Done()
	assert.ErrorIs(t, slow.Err(), ErrTooSlow)
	_, ok := slow.Next()
	assert.False(t, ok, "its queue is dropped at once")
	assert.Equal(t, 1, h.Listeners())
	assert.Equal(t, int64(1), h.Counted(), "its place is given back")
	assert.Len(t, drain(fast), 1)
}

func TestQueueBytesBound(t *testing.T) {
	h := NewHub(Limits{QueueBytes: 10 << 10}, nil)
	defer h.Close()
	var uris []string
	for i := range 3 {
		uris = append(uris, fmt.Sprintf("note://%d/%s", i, strings.Repeat("x", 4000)))
	}
	l, _ := listen(t, h, "a", Filter{Resources: uris})
	for _, u := range uris {
		h.Publish(Change{Kind: ResourceUpdated, URI: u})
	}
	assert.ErrorIs(t, l.Err(), ErrTooSlow)
}

func TestListenerLimits(t *testing.T) {
	h := NewHub(Limits{Listeners: owner.Limit{PerOwner: 2, Global: 3}, Subscriptions: 2}, nil)
	defer h.Close()
	l1, _ := listen(t, h, "a", Filter{})
	listen(t, h, "a", Filter{})
	_, err := h.Listen(ListenerOptions{Owner: "a", Wake: func() {}}, Filter{})
	var le *owner.BudgetError
	require.True(t, errors.As(err, &le))
	assert.Equal(t, owner.ScopeOwner, le.Scope)
	assert.Contains(t, err.Error(), SettingListenersPerClient)
	_, err = h.Listen(ListenerOptions{Owner: "a", Uncounted: true, Wake: func() {}}, Filter{})
	assert.NoError(t, err, "an uncounted listener is bounded elsewhere")
	l1.End(nil)
	_, err = h.Listen(ListenerOptions{Owner: "a", Wake: func() {}}, Filter{})
	assert.NoError(t, err, "an ended listener gives its place back")

	_, err = h.Listen(ListenerOptions{Owner: "b", Wake: func() {}}, Filter{Resources: []string{"a", "b", "c"}})
	var se *TooManySubscriptionsError
	assert.True(t, errors.As(err, &se))
	l, err := h.Listen(ListenerOptions{Owner: "c", Uncounted: true, Wake: func() {}}, Filter{Resources: []string{"a", "b"}})
	require.NoError(t, err)
	assert.True(t, errors.As(l.Subscribe("c"), &se))
	assert.NoError(t, l.Subscribe("a"), "a subscription it has already")
}

// TestListenersOfOneAddress: owners made up by one client address (a
// fresh Authorization each) share the address's bounds, in number and in
// bytes, and another address is served still.
func TestListenersOfOneAddress(t *testing.T) {
	h := NewHub(Limits{ListenersPerAddress: 3, Bytes: owner.BudgetLimit{PerAddress: 64 << 10}}, nil)
	defer h.Close()
	var be *owner.BudgetError
	for i := range 3 {
		_, err := h.Listen(ListenerOptions{Owner: owner.ID(fmt.Sprint("key:", i)), Address: "addr:10.0.0.1", Wake: func() {}}, Filter{ToolsListChanged: true})
		require.NoError(t, err)
	}
	_, err := h.Listen(ListenerOptions{Owner: "key:new", Address: "addr:10.0.0.1", Wake: func() {}}, Filter{ToolsListChanged: true})
	require.True(t, errors.As(err, &be), "the address's number of listeners")
	assert.Equal(t, owner.ScopeAddress, be.Scope)
	assert.Equal(t, "too many listeners from this client address (the limit is 3)", err.Error())

	uris := func(n int) []string {
		var l []string
		for i := range n {
			l = append(l, fmt.Sprintf("note://%d/%s", i, strings.Repeat("x", 4000)))
		}
		return l
	}
	opened := 0
	for ; opened < 4; opened++ {
		_, err := h.Listen(ListenerOptions{Owner: owner.ID(fmt.Sprint("key:", opened)), Address: "addr:10.0.0.2", Held: 16 << 10, Wake: func() {}},
			Filter{Resources: uris(4)})
		if err != nil {
			require.True(t, errors.As(err, &be), "the address's bytes")
			assert.Equal(t, owner.ScopeAddress, be.Scope)
			assert.Equal(t, "too many bytes kept for listeners from this client address (the limit is 65536)", err.Error())
			break
		}
	}
	assert.Equal(t, 1, opened, "a listener of 4 URIs of 4 KB and 16 KiB held costs more than half the address's 64 KiB")
	assert.Equal(t, int64(3*ListenerCost+16<<10+ListenerCost+4*(4009+SubscriptionCost)), h.Bytes(), "a refused listener keeps nothing")
	_, err = h.Listen(ListenerOptions{Owner: "key:0", Address: "addr:10.0.0.3", Wake: func() {}}, Filter{Resources: uris(8)})
	assert.NoError(t, err, "another address is served")
}

// TestListenerBytesAreGivenBack: whatever ends a listener, or a
// subscription, gives its bytes back.
func TestListenerBytesAreGivenBack(t *testing.T) {
	h := NewHub(Limits{Queue: 1, Subscriptions: 4, SubscriptionBytes: 100}, nil)
	defer h.Close()
	a, _ := listen(t, h, "a", Filter{Resources: []string{"note://a"}, Tasks: []string{"t1"}})
	require.NoError(t, a.Subscribe("note://b"))
	var se *TooManySubscriptionsError
	require.True(t, errors.As(a.Subscribe("note://"+strings.Repeat("c", 90)), &se), "the listener's URIs and task ids together")
	assert.Equal(t, "the URIs and task ids of one listener are too long together (the limit is 100 bytes)", se.Error())
	_, err := h.Listen(ListenerOptions{Owner: "a", Wake: func() {}}, Filter{Resources: []string{strings.Repeat("d", 101)}})
	require.True(t, errors.As(err, &se))
	a.Unsubscribe("note://b")
	assert.Equal(t, int64(ListenerCost+len("note://a")+len("t1")+2*SubscriptionCost), h.Bytes())

	slow, _ := listen(t, h, "a", Filter{ToolsListChanged: true, Resources: []string{"note://a"}})
	// Two different changes (an equal one would merge into the first)
	// pass its queue of one: it is ended as too slow.
	h.Publish(Change{Kind: ToolsListChanged})
	h.Publish(Change{Kind: ResourceUpdated, URI: "note://a"})
	select {
	case <-slow.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the slow listener was not ended")
	}
	a.End(nil)
	assert.Zero(t, h.Bytes())
	assert.Zero(t, h.Counted())
}

func TestCloseEndsListeners(t *testing.T) {
	h := NewHub(Limits{}, nil)
	l, _ := listen(t, h, "a", Filter{})
	h.SetRelay(&memRelay{self: h, all: &[]*Hub{}, sent: make(chan struct{}, 1)})
	h.Close()
	<-l.Done()
	assert.ErrorIs(t, l.Err(), ErrClosed)
	assert.Zero(t, h.Counted())
	_, err := h.Listen(ListenerOptions{Owner: "a", Wake: func() {}}, Filter{})
	assert.ErrorIs(t, err, ErrClosed)
}

func BenchmarkIdleListener(b *testing.B) {
	h := NewHub(Limits{Listeners: owner.Limit{PerOwner: 1 << 40, Global: 1 << 40}, ListenersPerAddress: 1 << 40,
		Bytes: owner.BudgetLimit{PerOwner: 1 << 50, PerAddress: 1 << 50, Global: 1 << 50}}, nil)
	defer h.Close()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Listen(ListenerOptions{Owner: "a", Wake: func() {}}, Filter{ToolsListChanged: true, Resources: []string{"note://a"}}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestHubMergesARepeatedChange: a listener that has not read yet keeps one
// place per resource and list however often each changes, so a flood of
// one resource neither ends it nor hides another resource's change.
func TestHubMergesARepeatedChange(t *testing.T) {
	h := NewHub(Limits{Queue: 4}, nil)
	defer h.Close()
	l, _ := listen(t, h, "a", Filter{ToolsListChanged: true, Resources: []string{"note://hot", "note://cold"}, Tasks: []string{"t1"}})

	for i := range 1000 {
		h.Publish(Change{Kind: ResourceUpdated, URI: "note://hot"})
		if i == 500 {
			h.Publish(Change{Kind: ResourceUpdated, URI: "note://cold"})
			h.Publish(Change{Kind: ToolsListChanged})
		}
	}
	require.NoError(t, l.Err(), "a flood of one resource takes one place")
	assert.Equal(t, []Change{
		{Kind: ResourceUpdated, URI: "note://hot"},
		{Kind: ResourceUpdated, URI: "note://cold"},
		{Kind: ToolsListChanged},
	}, drain(l))

	h.Publish(Change{Kind: ResourceUpdated, URI: "note://hot"})
	assert.Equal(t, []Change{{Kind: ResourceUpdated, URI: "note://hot"}}, drain(l), "once read, a change is queued again")

	for range 2 {
		h.Publish(Change{Kind: TaskStatus, TaskID: "t1", Owner: "a", Task: []byte(`{}`)})
	}
	assert.Len(t, drain(l), 2, "every state of a task is told")
}

// funcRelay is a relay whose Broadcast a test writes.
type funcRelay func(ctx context.Context) error

func (f funcRelay) Broadcast(ctx context.Context, _ []byte) error { return f(ctx) }

// TestPublishTrackedReportsTheRelay: PublishTracked says what became of a
// change on its way to the other instances: nil with no relay, the relay's
// outcome, ErrRelayBehind when the relay's queue is full, the change's own
// error for a change that breaks the rules; and nothing while the relay
// has not finished.
func TestPublishTrackedReportsTheRelay(t *testing.T) {
	h := NewHub(Limits{}, nil)
	defer h.Close()
	c := Change{Kind: ResourceUpdated, URI: "note://a"}
	assert.NoError(t, <-h.PublishTracked(c), "no relay: nothing more to do")
	assert.ErrorIs(t, <-h.PublishTracked(Change{Kind: ResourceUpdated}), ErrBadChange)

	refused := errors.New("storage refused")
	h.SetRelay(funcRelay(func(context.Context) error { return refused }))
	assert.ErrorIs(t, <-h.PublishTracked(c), refused)

	release := make(chan struct{})
	h.SetRelay(funcRelay(func(ctx context.Context) error {
		select {
		case <-release:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}))
	first := h.PublishTracked(c)
	select {
	case err := <-first:
		t.Fatalf("reported %v before the relay finished", err)
	default:
	}
	var last <-chan error
	for range relayQueue + 1 { // the sender holds the first; these fill the queue, and one more
		last = h.PublishTracked(c)
	}
	assert.ErrorIs(t, <-last, ErrRelayBehind)
	close(release)
	assert.NoError(t, <-first)
}
