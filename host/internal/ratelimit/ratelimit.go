package ratelimit

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// The settings of the limits (see docs/configuration.md).
const (
	// SettingPerOwner is "rate,burst": the requests per second each owner
	// may make, and how many at once.
	SettingPerOwner = "FUNCMCP_RATE_PER_OWNER"
	// SettingPerTool is "rate,burst": the calls per second each owner may
	// make of one tool, and how many at once.
	SettingPerTool = "FUNCMCP_RATE_PER_TOOL"
)

// DefaultMaxBuckets bounds the buckets kept (owners, and owners' tools).
const DefaultMaxBuckets = 10_000

// Rate is a token bucket's refill (tokens per second) and size.
type Rate struct {
	PerSecond float64
	Burst     int
}

// On reports whether the rate limits anything.
func (r Rate) On() bool { return r.PerSecond > 0 && r.Burst > 0 }

func (r Rate) String() string {
	return strconv.FormatFloat(r.PerSecond, 'g', -1, 64) + "," + strconv.Itoa(r.Burst)
}

// ParseRate reads "rate,burst" (a burst of at least 1; without one, the
// rate rounded up); "" is no limit.
func ParseRate(v string) (Rate, error) {
	v = strings.TrimSpace(v)
	if v == "" {
		return Rate{}, nil
	}
	rs, bs, hasBurst := strings.Cut(v, ",")
	per, err := strconv.ParseFloat(strings.TrimSpace(rs), 64)
	if err != nil || per <= 0 || math.IsInf(per, 0) || math.IsNaN(per) {
		return Rate{}, fmt.Errorf("reading the rate %q: want a positive number of requests per second", rs)
	}
	burst := int(math.Ceil(per))
	if hasBurst {
		if burst, err = strconv.Atoi(strings.TrimSpace(bs)); err != nil || burst < 1 {
			return Rate{}, fmt.Errorf("reading the burst %q: want a whole number of at least 1", bs)
		}
	}
	return Rate{PerSecond: per, Burst: burst}, nil
}

// Options configure a [Limiter].
type Options struct {
	// PerOwner limits every exchange of one owner; zero: no limit.
	PerOwner Rate
	// PerTool limits the tools/call of one owner for one tool; zero: no
	// limit.
	PerTool Rate
	// MaxBuckets bounds the buckets kept; 0: DefaultMaxBuckets.
	MaxBuckets int
	// Now is the clock; nil: time.Now.
	Now func() time.Time
}

// Scope says which limit refused.
type Scope string

// The limits.
const (
	ScopeOwner  Scope = "owner"  // the owner's rate
	ScopeTool   Scope = "tool"   // the owner's rate for one tool
	ScopeServer Scope = "server" // no room for another bucket
)

// LimitError is a refusal: which limit, and when to try again.
type LimitError struct {
	Scope      Scope
	Rate       Rate
	RetryAfter time.Duration
}

func (e *LimitError) Error() string {
	switch e.Scope {
	case ScopeTool:
		return fmt.Sprintf("too many calls of this tool from this client (the limit is %s per second, set by %s)", e.Rate, SettingPerTool)
	case ScopeServer:
		return "too many clients are being rate limited at once"
	}
	return fmt.Sprintf("too many requests from this client (the limit is %s per second, set by %s)", e.Rate, SettingPerOwner)
}

// RetryAfterSeconds is RetryAfter in whole seconds, rounded up, at least 1.
func (e *LimitError) RetryAfterSeconds() int {
	return max(1, int(math.Ceil(e.RetryAfter.Seconds())))
}

// key names a bucket: an owner's (tool "") or an owner's for one tool.
type key struct {
	owner owner.ID
	tool  string
}

// Limiter keeps the buckets. It is safe for concurrent use.
type Limiter struct {
	o Options

	mu        sync.Mutex
	buckets   map[key]*rate.Limiter
	lastSweep time.Time
}

// sweepEvery is how often idle buckets are dropped when there is room.
const sweepEvery = time.Minute

// New returns the limiter of o; nil when neither limit is on.
func New(o Options) *Limiter {
	if !o.PerOwner.On() && !o.PerTool.On() {
		return nil
	}
	if o.MaxBuckets <= 0 {
		o.MaxBuckets = DefaultMaxBuckets
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Limiter{o: o, buckets: map[key]*rate.Limiter{}, lastSweep: o.Now()}
}

// Load reads the settings through lookup (which returns a value and where
// it was found); nil when neither limit is set.
func Load(lookup func(string) (string, string)) (*Limiter, error) {
	var o Options
	for _, s := range []struct {
		name string
		dst  *Rate
	}{{SettingPerOwner, &o.PerOwner}, {SettingPerTool, &o.PerTool}} {
		v, from := lookup(s.name)
		r, err := ParseRate(v)
		if err != nil {
			return nil, fmt.Errorf("reading %s from %s: %w", s.name, from, err)
		}
		*s.dst = r
	}
	return New(o), nil
}

// Options returns the limiter's options.
func (l *Limiter) Options() Options { return l.o }

// Allow takes a token of o's bucket and, when tool is not "", of o's
// bucket for tool; it takes none and returns a *LimitError when either is
// empty.
func (l *Limiter) Allow(o owner.ID, tool string) error {
	now := l.o.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	var taken *rate.Reservation
	if l.o.PerOwner.On() {
		r, err := l.take(key{owner: o}, l.o.PerOwner, ScopeOwner, now)
		if err != nil {
			return err
		}
		taken = r
	}
	if tool != "" && l.o.PerTool.On() {
		if _, err := l.take(key{owner: o, tool: tool}, l.o.PerTool, ScopeTool, now); err != nil {
			if taken != nil {
				taken.CancelAt(now) // the owner's token goes back
			}
			return err
		}
	}
	return nil
}

// take takes a token of k's bucket, made with r when there is none.
func (l *Limiter) take(k key, r Rate, s Scope, now time.Time) (*rate.Reservation, error) {
	b := l.buckets[k]
	if b == nil {
		if len(l.buckets) >= l.o.MaxBuckets || now.Sub(l.lastSweep) >= sweepEvery {
			l.sweep(now)
		}
		if len(l.buckets) >= l.o.MaxBuckets {
			return nil, &LimitError{Scope: ScopeServer, RetryAfter: time.Second}
		}
		b = rate.NewLimiter(rate.Limit(r.PerSecond), r.Burst)
		l.buckets[k] = b
	}
	res := b.ReserveN(now, 1)
	if d := res.DelayFrom(now); d > 0 {
		res.CancelAt(now)
		return nil, &LimitError{Scope: s, Rate: r, RetryAfter: d}
	}
	return res, nil
}

// sweep drops the buckets that have refilled: they hold nothing a new
// bucket would not. It runs at most once a second when the buckets are
// full, so that a full table costs no more than one pass a second.
func (l *Limiter) sweep(now time.Time) {
	if now.Sub(l.lastSweep) < time.Second && len(l.buckets) > 0 {
		return
	}
	l.lastSweep = now
	for k, b := range l.buckets {
		if b.TokensAt(now) >= float64(b.Burst()) {
			delete(l.buckets, k)
		}
	}
}

// Len returns the buckets kept.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}
