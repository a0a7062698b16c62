package mcp

import (
	"sync"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// The resource subscriptions of legacy sessions (resources/subscribe over
// Streamable HTTP). A session is a sealed token and the server keeps no
// state for it, except this: the URIs a session subscribed to, kept on the
// instance that served resources/subscribe until the session's token
// expires, and the session's GET stream when one is open here. With
// several instances, the session's requests and its GET stream must reach
// the same instance (session affinity), as resumable streams need.

// DefaultSubscribedSessions bounds the sessions whose subscriptions an
// instance keeps, per client and in all.
var DefaultSubscribedSessions = owner.Limit{PerOwner: 256, Global: 10000}

// SettingSubscribedSessions names the per-client bound of
// [Options.SubscribedSessions] in refusals.
const SettingSubscribedSessions = "FUNCMCP_SUBSCRIBED_SESSIONS_PER_CLIENT"

type sessionTable struct {
	hub     *notify.Hub
	counter *owner.Counter
	now     func() time.Time

	mu        sync.Mutex
	m         map[string]*sessionSubs
	lastSweep time.Time
}

// sessionSubs is what one session has here.
type sessionSubs struct {
	uris    map[string]struct{}
	live    *notify.Listener // its GET stream's listener; nil when none is open here
	expires time.Time        // the session token's expiry
	release func()           // gives its place in the counter back
}

func newSessionTable(hub *notify.Hub, l owner.Limit) *sessionTable {
	if l.PerOwner <= 0 {
		l.PerOwner = DefaultSubscribedSessions.PerOwner
	}
	if l.Global <= 0 {
		l.Global = DefaultSubscribedSessions.Global
	}
	return &sessionTable{hub: hub, now: time.Now, m: map[string]*sessionSubs{},
		counter: owner.NewCounter("sessions with resource subscriptions", SettingSubscribedSessions, l)}
}

// entry returns the session's entry, made (and counted) when it has none;
// t.mu is held.
func (t *sessionTable) entryLocked(s *session, who owner.ID) (*sessionSubs, error) {
	if e := t.m[s.id]; e != nil {
		return e, nil
	}
	t.sweepLocked()
	release, err := t.counter.Take(who, 1)
	if err != nil {
		return nil, err
	}
	exp := s.expires
	if exp.IsZero() {
		exp = t.now().Add(DefaultSessionLifetime)
	}
	e := &sessionSubs{uris: map[string]struct{}{}, expires: exp, release: release}
	t.m[s.id] = e
	return e, nil
}

// sweepLocked forgets sessions whose token expired, at most once a minute.
func (t *sessionTable) sweepLocked() {
	now := t.now()
	if now.Sub(t.lastSweep) < time.Minute {
		return
	}
	t.lastSweep = now
	for id, e := range t.m {
		if now.After(e.expires) {
			if e.live != nil {
				e.live.End(notify.ErrEnded)
			}
			e.release()
			delete(t.m, id)
		}
	}
}

// forgetIdleLocked drops an entry that has neither subscriptions nor a
// stream.
func (t *sessionTable) forgetIdleLocked(id string, e *sessionSubs) {
	if len(e.uris) == 0 && e.live == nil {
		e.release()
		delete(t.m, id)
	}
}

func (t *sessionTable) subscribe(s *session, who owner.ID, uri string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, err := t.entryLocked(s, who)
	if err != nil {
		return err
	}
	if _, ok := e.uris[uri]; ok {
		return nil
	}
	if len(e.uris) >= t.hub.Limits().Subscriptions {
		t.forgetIdleLocked(s.id, e)
		return &notify.TooManySubscriptionsError{Limit: t.hub.Limits().Subscriptions}
	}
	if e.live != nil {
		if err := e.live.Subscribe(uri); err != nil {
			return err
		}
	}
	e.uris[uri] = struct{}{}
	return nil
}

func (t *sessionTable) unsubscribe(id, uri string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.m[id]
	if e == nil {
		return
	}
	delete(e.uris, uri)
	if e.live != nil {
		e.live.Unsubscribe(uri)
	}
	t.forgetIdleLocked(id, e)
}

// attach makes the listener of the session's GET stream: the lists of
// filter and the URIs the session subscribed to. A stream open for the
// session already is ended (replaced).
func (t *sessionTable) attach(s *session, who owner.ID, filter notify.Filter, wake func()) (*notify.Listener, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, err := t.entryLocked(s, who)
	if err != nil {
		return nil, err
	}
	for u := range e.uris {
		filter.Resources = append(filter.Resources, u)
	}
	if e.live != nil {
		e.live.End(notify.ErrReplaced)
		e.live = nil
	}
	l, err := t.hub.Listen(notify.ListenerOptions{Owner: who, Wake: wake}, filter)
	if err != nil {
		t.forgetIdleLocked(s.id, e)
		return nil, err
	}
	e.live = l
	return l, nil
}

// detach forgets the session's stream l when it ends.
func (t *sessionTable) detach(id string, l *notify.Listener) {
	l.End(nil)
	t.mu.Lock()
	defer t.mu.Unlock()
	if e := t.m[id]; e != nil && e.live == l {
		e.live = nil
		t.forgetIdleLocked(id, e)
	}
}

// sessions returns the sessions with subscriptions or a stream here.
func (t *sessionTable) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}
