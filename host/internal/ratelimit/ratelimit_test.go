package ratelimit

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// clock is a test clock moved by hand.
type clock struct{ now time.Time }

func (c *clock) Now() time.Time { return c.now }

func limitOf(t *testing.T, err error) *LimitError {
	t.Helper()
	var le *LimitError
	require.True(t, errors.As(err, &le), "want a *LimitError, got %v", err)
	return le
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want Rate
		err  bool
	}{
		{in: "", want: Rate{}},
		{in: "10,20", want: Rate{PerSecond: 10, Burst: 20}},
		{in: " 0.5 , 1 ", want: Rate{PerSecond: 0.5, Burst: 1}},
		{in: "2.5", want: Rate{PerSecond: 2.5, Burst: 3}},
		{in: "0,1", err: true},
		{in: "-1,1", err: true},
		{in: "x", err: true},
		{in: "1,0", err: true},
		{in: "1,x", err: true},
		{in: "NaN,1", err: true},
		{in: "Inf,1", err: true},
	}
	for _, tt := range tests {
		got, err := ParseRate(tt.in)
		if tt.err {
			assert.Error(t, err, tt.in)
			continue
		}
		require.NoError(t, err, tt.in)
		assert.Equal(t, tt.want, got, tt.in)
	}
}

func TestLoadIsOffUnlessSet(t *testing.T) {
	none := func(string) (string, string) { return "", "" }
	l, err := Load(none)
	require.NoError(t, err)
	assert.Nil(t, l, "no setting: no limiter")
	assert.Nil(t, l.Middleware(), "and no link")

	set := func(name string) (string, string) {
		if name == SettingPerOwner {
			return "5,10", "environment " + name
		}
		return "", ""
	}
	l, err = Load(set)
	require.NoError(t, err)
	require.NotNil(t, l)
	assert.Equal(t, Rate{PerSecond: 5, Burst: 10}, l.Options().PerOwner)
	assert.Len(t, l.Middleware(), 1)

	bad := func(name string) (string, string) { return "fast", "environment " + name }
	_, err = Load(bad)
	require.Error(t, err)
	assert.Contains(t, err.Error(), SettingPerOwner)
}

// TestPerOwnerBucket: an owner gets its burst, then is refused with the
// time until its next token; another owner is served meanwhile; time
// refills the bucket.
func TestPerOwnerBucket(t *testing.T) {
	c := &clock{now: time.Unix(1000, 0)}
	l := New(Options{PerOwner: Rate{PerSecond: 0.5, Burst: 2}, Now: c.Now})
	a, b := owner.ID("addr:192.0.2.1"), owner.ID("addr:192.0.2.2")
	require.NoError(t, l.Allow(a, ""))
	require.NoError(t, l.Allow(a, ""))
	le := limitOf(t, l.Allow(a, ""))
	assert.Equal(t, ScopeOwner, le.Scope)
	assert.Equal(t, 2*time.Second, le.RetryAfter)
	assert.Equal(t, 2, le.RetryAfterSeconds())
	assert.Contains(t, le.Error(), SettingPerOwner)
	require.NoError(t, l.Allow(b, ""), "another owner has its own bucket")

	c.now = c.now.Add(1500 * time.Millisecond)
	le = limitOf(t, l.Allow(a, ""))
	assert.Equal(t, 500*time.Millisecond, le.RetryAfter)
	assert.Equal(t, 1, le.RetryAfterSeconds(), "rounded up")
	c.now = c.now.Add(500 * time.Millisecond)
	require.NoError(t, l.Allow(a, ""), "a token refilled")
}

// TestPerToolBucket: one tool's bucket refuses without spending the
// owner's token; another tool of the same owner is served.
func TestPerToolBucket(t *testing.T) {
	c := &clock{now: time.Unix(1000, 0)}
	l := New(Options{PerOwner: Rate{PerSecond: 1, Burst: 3}, PerTool: Rate{PerSecond: 1, Burst: 1}, Now: c.Now})
	a := owner.ID("principal:x")
	require.NoError(t, l.Allow(a, "slow"))
	le := limitOf(t, l.Allow(a, "slow"))
	assert.Equal(t, ScopeTool, le.Scope)
	assert.Contains(t, le.Error(), SettingPerTool)
	require.NoError(t, l.Allow(a, "fast"), "the owner's token came back when the tool refused")
	require.NoError(t, l.Allow(a, ""))
	assert.Equal(t, ScopeOwner, limitOf(t, l.Allow(a, "")).Scope)
}

// TestBucketsAreBounded: owners are the client's choice, so the buckets
// kept are bounded: refilled buckets are dropped, and past MaxBuckets a
// new owner is refused until some refill.
func TestBucketsAreBounded(t *testing.T) {
	c := &clock{now: time.Unix(1000, 0)}
	l := New(Options{PerOwner: Rate{PerSecond: 1, Burst: 1}, MaxBuckets: 4, Now: c.Now})
	for i := range 4 {
		require.NoError(t, l.Allow(owner.ID(fmt.Sprintf("addr:192.0.2.%d", i)), ""))
	}
	le := limitOf(t, l.Allow("addr:192.0.2.99", ""))
	assert.Equal(t, ScopeServer, le.Scope)
	assert.Equal(t, 4, l.Len())

	c.now = c.now.Add(time.Second) // every bucket refilled: idle
	require.NoError(t, l.Allow("addr:192.0.2.99", ""))
	assert.Equal(t, 1, l.Len(), "the idle buckets went")

	// With room, idle buckets still go, once a minute.
	c.now = c.now.Add(2 * time.Minute)
	require.NoError(t, l.Allow("addr:192.0.2.100", ""))
	assert.Equal(t, 1, l.Len())
}
