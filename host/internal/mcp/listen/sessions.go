package listen

import (
	"slices"
	"sync"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// The resource subscriptions of legacy sessions (resources/subscribe over
// Streamable HTTP). A session is a sealed token and the server keeps no
// state for it, except this: the URIs a session subscribed to, kept on the
// instance that served resources/subscribe, and the session's GET stream
// when one is open here. With several instances, the session's requests
// and its GET stream must reach the same instance (session affinity), as
// resumable streams need.
//
// What a session keeps here is bounded three ways: in bytes (every URI and
// every session counted per owner, per client address and in all, see
// mcp.Options.SubscriptionBytes), in number (sessions per owner and in all,
// URIs per session) and in time: the session's token lifetime, and, while
// no stream of the session is open here, mcp.Options.SubscriptionGrace: the
// subscriptions of a session that never opens its stream, or left it, do
// not stay for a day.

// Session is a legacy session as the table knows it: its id and the
// expiry of its token (zero: none named).
type Session struct {
	ID      string
	Expires time.Time
}

// DefaultSubscribedSessions bounds the sessions whose subscriptions an
// instance keeps, per client and in all.
var DefaultSubscribedSessions = owner.Limit{PerOwner: 256, Global: 10000}

// DefaultSubscriptionBytes bounds the bytes of the sessions' subscriptions
// an instance keeps, per client (owner), per client address and in all.
var DefaultSubscriptionBytes = owner.BudgetLimit{PerOwner: 1 << 20, PerAddress: 4 << 20, Global: 64 << 20}

// DefaultSubscriptionGrace is how long a session's subscriptions are kept
// while no stream of the session is open here.
const DefaultSubscriptionGrace = 5 * time.Minute

// What a session's subscriptions are charged in bytes
// (mcp.Options.SubscriptionBytes): each URI its length and
// subscriptionCost, each session with any sessionCost.
const (
	subscriptionCost = 64
	sessionCost      = 512
)

// SettingSubscribedSessions names the per-client bound of
// mcp.Options.SubscribedSessions in refusals.
const SettingSubscribedSessions = "FUNCMCP_SUBSCRIBED_SESSIONS_PER_CLIENT"

// Sessions keeps the resource subscriptions of the legacy sessions served
// here, and their GET streams' listeners.
type Sessions struct {
	lifetime time.Duration // of a session token without an expiry
	hub      *notify.Hub
	counter  *owner.Counter // sessions
	bytes    *owner.Budget  // what they keep
	grace    time.Duration
	now      func() time.Time

	mu        sync.Mutex
	m         map[string]*sessionSubs
	uris      map[string]internedURI // every URI kept, once
	lastSweep time.Time
	sweeper   *time.Timer // armed while the table is not empty
}

// internedURI is a URI kept and the number of sessions subscribed to it.
type internedURI struct {
	s string
	n int
}

// sessionSubs is what one session has here.
type sessionSubs struct {
	who, addr owner.ID // charged for it
	charged   int64
	uris      []string         // interned (Sessions.uris)
	uriBytes  int              // their length together
	live      *notify.Listener // its GET stream's listener; nil when none is open here
	expires   time.Time        // the session token's expiry
	idleSince time.Time        // since when no stream is open here
	release   func()           // gives its place in the counter back
}

// NewSessions returns the table of the sessions' subscriptions, whose
// changes hub carries, bounded by l (sessions), b (bytes) and grace (the
// time kept without a stream; 0 means the defaults); lifetime is that of a
// session token that names no expiry.
func NewSessions(hub *notify.Hub, l owner.Limit, b owner.BudgetLimit, grace, lifetime time.Duration) *Sessions {
	if l.PerOwner <= 0 {
		l.PerOwner = DefaultSubscribedSessions.PerOwner
	}
	if l.Global <= 0 {
		l.Global = DefaultSubscribedSessions.Global
	}
	if b.PerOwner <= 0 {
		b.PerOwner = DefaultSubscriptionBytes.PerOwner
	}
	if b.PerAddress <= 0 {
		b.PerAddress = DefaultSubscriptionBytes.PerAddress
	}
	if b.Global <= 0 {
		b.Global = DefaultSubscriptionBytes.Global
	}
	if grace <= 0 {
		grace = DefaultSubscriptionGrace
	}
	return &Sessions{lifetime: lifetime, hub: hub, now: time.Now, m: map[string]*sessionSubs{}, uris: map[string]internedURI{}, grace: grace,
		counter: owner.NewCounter("sessions with resource subscriptions", SettingSubscribedSessions, l),
		bytes:   owner.NewBudget("bytes of resource subscriptions", b)}
}

// entryLocked returns the session's entry, made (and counted) when it has
// none; t.mu is held.
func (t *Sessions) entryLocked(s Session, who, addr owner.ID) (*sessionSubs, error) {
	t.sweepLocked(false)
	if e := t.m[s.ID]; e != nil {
		return e, nil
	}
	release, err := t.counter.Take(who, 1)
	if err != nil {
		return nil, err
	}
	if err := t.bytes.Take(who, addr, sessionCost); err != nil {
		release()
		return nil, err
	}
	now := t.now()
	exp := s.Expires
	if exp.IsZero() {
		exp = now.Add(t.lifetime)
	}
	e := &sessionSubs{who: who, addr: addr, charged: sessionCost, expires: exp, idleSince: now, release: release}
	t.m[s.ID] = e
	t.armLocked()
	return e, nil
}

// armLocked makes sure a sweep comes while the table keeps anything, so
// that what expired goes without waiting for another request.
func (t *Sessions) armLocked() {
	if t.sweeper != nil || len(t.m) == 0 {
		return
	}
	t.sweeper = time.AfterFunc(t.sweepEvery(), func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.sweeper = nil
		t.sweepLocked(true)
		t.armLocked()
	})
}

// sweepEvery is how often expired sessions are looked for: a fraction of
// the grace, at most a minute.
func (t *Sessions) sweepEvery() time.Duration { return min(t.grace/4, time.Minute) }

// sweepLocked forgets sessions whose token expired and those without a
// stream here for longer than the grace, at most once a sweepEvery unless
// forced.
func (t *Sessions) sweepLocked(force bool) {
	now := t.now()
	if !force && now.Sub(t.lastSweep) < t.sweepEvery() {
		return
	}
	t.lastSweep = now
	for id, e := range t.m {
		if now.After(e.expires) || e.live == nil && now.Sub(e.idleSince) > t.grace {
			if e.live != nil {
				e.live.End(notify.ErrEnded)
				e.live = nil
			}
			t.forgetLocked(id, e)
		}
	}
}

// forgetLocked drops the entry of session id and gives back what it held.
func (t *Sessions) forgetLocked(id string, e *sessionSubs) {
	for _, u := range e.uris {
		t.uninternLocked(u)
	}
	e.uris = nil
	t.bytes.Give(e.who, e.addr, e.charged)
	e.charged = 0
	e.release()
	delete(t.m, id)
}

// forgetIdleLocked drops an entry that has neither subscriptions nor a
// stream.
func (t *Sessions) forgetIdleLocked(id string, e *sessionSubs) {
	if len(e.uris) == 0 && e.live == nil {
		t.forgetLocked(id, e)
	}
}

// internLocked returns the copy of uri kept already, or uri itself, now
// kept: every session subscribed to one URI shares its bytes.
func (t *Sessions) internLocked(uri string) string {
	r, ok := t.uris[uri]
	if !ok {
		r.s = uri
	}
	r.n++
	t.uris[r.s] = r
	return r.s
}

func (t *Sessions) uninternLocked(uri string) {
	r := t.uris[uri]
	if r.n <= 1 {
		delete(t.uris, uri)
		return
	}
	r.n--
	t.uris[uri] = r
}

// Subscribe adds uri to the subscriptions of session s, of owner who from
// address addr. It is refused with a *notify.TooManySubscriptionsError
// past the URIs of one session, an *owner.LimitError past the sessions, an
// *owner.BudgetError past the bytes.
func (t *Sessions) Subscribe(s Session, who, addr owner.ID, uri string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, err := t.entryLocked(s, who, addr)
	if err != nil {
		return err
	}
	if slices.Contains(e.uris, uri) {
		return nil
	}
	lim := t.hub.Limits()
	switch {
	case len(e.uris) >= lim.Subscriptions:
		err = &notify.TooManySubscriptionsError{Limit: lim.Subscriptions}
	case e.uriBytes+len(uri) > lim.SubscriptionBytes:
		err = &notify.TooManySubscriptionsError{Limit: lim.SubscriptionBytes, Bytes: true}
	default:
		cost := int64(len(uri) + subscriptionCost)
		if err = t.bytes.Take(e.who, e.addr, cost); err == nil {
			e.charged += cost
		}
	}
	if err != nil {
		t.forgetIdleLocked(s.ID, e)
		return err
	}
	uri = t.internLocked(uri)
	if e.live != nil {
		if err := e.live.Subscribe(uri); err != nil {
			t.uninternLocked(uri)
			cost := int64(len(uri) + subscriptionCost)
			t.bytes.Give(e.who, e.addr, cost)
			e.charged -= cost
			return err
		}
	}
	e.uris = append(e.uris, uri)
	e.uriBytes += len(uri)
	return nil
}

func (t *Sessions) Unsubscribe(id, uri string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.m[id]
	if e == nil {
		return
	}
	i := slices.Index(e.uris, uri)
	if i < 0 {
		return
	}
	e.uris = slices.Delete(e.uris, i, i+1)
	e.uriBytes -= len(uri)
	cost := int64(len(uri) + subscriptionCost)
	t.bytes.Give(e.who, e.addr, cost)
	e.charged -= cost
	t.uninternLocked(uri)
	if e.live != nil {
		e.live.Unsubscribe(uri)
	}
	t.forgetIdleLocked(id, e)
}

// Attach makes the listener of the session's GET stream: the lists of
// filter and the URIs the session subscribed to; o says who the stream
// is (its Wake, Owner, Address, Held). A stream open for the session
// already is ended (replaced).
func (t *Sessions) Attach(s Session, o notify.ListenerOptions, filter notify.Filter) (*notify.Listener, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, err := t.entryLocked(s, o.Owner, o.Address)
	if err != nil {
		return nil, err
	}
	filter.Resources = append(filter.Resources, e.uris...)
	if e.live != nil {
		e.live.End(notify.ErrReplaced)
		e.live = nil
	}
	l, err := t.hub.Listen(o, filter)
	if err != nil {
		e.idleSince = t.now()
		t.forgetIdleLocked(s.ID, e)
		return nil, err
	}
	e.live = l
	return l, nil
}

// Detach forgets the session's stream l when it ends: the grace of its
// subscriptions starts.
func (t *Sessions) Detach(id string, l *notify.Listener) {
	l.End(nil)
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.m[id]; e != nil && e.live == l {
		e.live = nil
		e.idleSince = t.now()
		t.forgetIdleLocked(id, e)
	}
}

// Size returns the sessions with subscriptions or a stream here.
func (t *Sessions) Size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// SetClock replaces the clock the table reads (a test's fake clock).
func (t *Sessions) SetClock(now func() time.Time) {
	t.mu.Lock()
	t.now = now
	t.mu.Unlock()
}

// HeldFrom returns the bytes the subscriptions of client address addr hold.
func (t *Sessions) HeldFrom(addr owner.ID) int64 { return t.bytes.HeldFrom(addr) }

// Held returns the bytes the sessions' subscriptions hold in all.
func (t *Sessions) Held() int64 { return t.bytes.Total() }

// URIs returns how many distinct URIs the table keeps.
func (t *Sessions) URIs() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.uris)
}
