package backplane

import (
	"context"
	"crypto/tls"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

func newTestRedis(t *testing.T, id string, c RedisConnection, o *RedisOptions) *Redis {
	t.Helper()
	if o == nil {
		o = &RedisOptions{}
	}
	if o.OutcomeTimeout == 0 {
		o.OutcomeTimeout = time.Minute
	}
	c.Name = "FUNCMCP_REDIS"
	r, err := NewRedis(id, c, o)
	require.NoError(t, err)
	return r
}

func TestRedis(t *testing.T) {
	srv := testutil.StartRedis(t, testutil.RedisOptions{Password: "s3cret"})
	c := RedisConnection{ConnectionString: srv.Addr() + ",password=s3cret,abortConnect=False"}
	opts := func() *RedisOptions { return &RedisOptions{Heartbeat: 100 * time.Millisecond} }
	a := newTestRedis(t, "instancea", c, opts())
	b := newTestRedis(t, "instanceb", c, opts())
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr(), Password: "s3cret"})
	defer raw.Close()
	testBackplane(t, a, b, "instancea", a.halt, func(t *testing.T) {
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			n, err := raw.Exists(t.Context(), redisAlive("instancea")).Result()
			assert.NoError(c, err)
			assert.Zero(c, n, "the heartbeat key expires")
		}, 20*time.Second, 20*time.Millisecond)
	})
}

// TestRedisDeadOwner: a message sent just as its instance dies is answered
// with the instance's death within the liveness window, not after the
// outcome timeout; the dead instance's list expires on its own, or goes
// as soon as a sender finds the instance dead.
func TestRedisDeadOwner(t *testing.T) {
	srv := testutil.StartRedis(t, testutil.RedisOptions{})
	c := RedisConnection{ConnectionString: srv.Addr()}
	ctx := t.Context()
	a := newTestRedis(t, "instancea", c, &RedisOptions{Heartbeat: 200 * time.Millisecond, MessageTTL: time.Second})
	b := newTestRedis(t, "instanceb", c, &RedisOptions{Heartbeat: 200 * time.Millisecond, MessageTTL: time.Second})
	require.NoError(t, a.Start(ctx, newStreams("client1").deliver))
	require.NoError(t, b.Start(ctx, newStreams().deliver))
	defer b.Stop(context.WithoutCancel(ctx))
	a.halt()
	_, err := b.Send(ctx, "instancea", msg(1)) // its heartbeat key still lives
	require.ErrorIs(t, err, ErrUnknownInstance)
	var gone *InstanceGoneError
	assert.ErrorAs(t, err, &gone)
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer raw.Close()
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		n, err := raw.Exists(ctx, redisList("instancea"), redisAlive("instancea")).Result()
		assert.NoError(c, err)
		assert.Zero(c, n)
	}, 20*time.Second, 50*time.Millisecond)

	// Killed again with a message in its list: the next sender removes it.
	c2 := newTestRedis(t, "instancec", c, &RedisOptions{Heartbeat: 200 * time.Millisecond})
	require.NoError(t, c2.Start(ctx, newStreams("client1").deliver))
	c2.halt()
	require.NoError(t, raw.RPush(ctx, redisList("instancec"), `{"ClientId":"client1","Message":{}}`).Err())
	require.EventuallyWithT(t, func(c *assert.CollectT) {
		_, err := b.Send(ctx, "instancec", msg(2))
		assert.ErrorIs(c, err, ErrUnknownInstance)
		n, err := raw.Exists(ctx, redisList("instancec")).Result()
		assert.NoError(c, err)
		assert.Zero(c, n, "the list of an instance found dead is deleted")
	}, 20*time.Second, 50*time.Millisecond)
}

// TestRedisTLSAndEntra: TLS with a certificate the test made, a password
// connection string with ssl=True, and a Microsoft Entra connection (user
// name and token, as Azure Cache for Redis takes them); a wrong token is
// refused at Start.
func TestRedisTLSAndEntra(t *testing.T) {
	cert := testutil.NewTestCert(t)
	srv := testutil.StartRedis(t, testutil.RedisOptions{Password: "pw", Users: map[string]string{"principal-oid": "token-1"}, Cert: cert})
	ctx := t.Context()
	var tokens atomic.Int32
	entra := RedisConnection{Address: srv.TLSAddr(), User: "principal-oid", RootCAs: cert.Pool, Token: func(context.Context) (string, error) {
		tokens.Add(1)
		return "token-1", nil
	}}
	a := newTestRedis(t, "instancea", entra, nil)
	b := newTestRedis(t, "instanceb", RedisConnection{ConnectionString: srv.TLSAddr() + ",password=pw,ssl=True", RootCAs: cert.Pool}, nil)
	sa := newStreams("client1")
	require.NoError(t, a.Start(ctx, sa.deliver))
	defer a.Stop(context.WithoutCancel(ctx))
	require.NoError(t, b.Start(ctx, newStreams().deliver))
	defer b.Stop(context.WithoutCancel(ctx))
	out, err := b.Send(ctx, "instancea", msg(1))
	require.NoError(t, err)
	assert.Equal(t, Taken, out)
	assert.Positive(t, tokens.Load())

	for name, c := range map[string]RedisConnection{
		"a wrong token":       {Address: srv.TLSAddr(), User: "principal-oid", RootCAs: cert.Pool, Token: func(context.Context) (string, error) { return "token-2", nil }},
		"an untrusted server": {ConnectionString: srv.TLSAddr() + ",password=pw,ssl=True"},
	} {
		t.Run(name, func(t *testing.T) {
			r := newTestRedis(t, "instancec", c, nil)
			err := r.Start(ctx, newStreams().deliver)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "FUNCMCP_REDIS ("+srv.TLSAddr()+")")
			assert.NotContains(t, err.Error(), "token-")
		})
	}
}

func TestParseRedisConnectionString(t *testing.T) {
	for _, tc := range []struct {
		in                string
		addr, user, pw    string
		tls               bool
		serverName, error string
	}{
		{in: "cache.redis.cache.windows.net:6380,password=abc=,ssl=True,abortConnect=False", addr: "cache.redis.cache.windows.net:6380", pw: "abc=", tls: true, serverName: "cache.redis.cache.windows.net"},
		{in: "cache.westeurope.redis.azure.net:10000,password=p,ssl=true", addr: "cache.westeurope.redis.azure.net:10000", pw: "p", tls: true, serverName: "cache.westeurope.redis.azure.net"},
		{in: "host,ssl=True", addr: "host:6380", tls: true, serverName: "host"},
		{in: "host", addr: "host:6379"},
		{in: "10.0.0.1:6380,ssl=True,sslHost=cache.example", addr: "10.0.0.1:6380", tls: true, serverName: "cache.example"},
		{in: "host:1,user=u,password=p,connectTimeout=5000,defaultDatabase=2", addr: "host:1", user: "u", pw: "p"},
		{in: "host:1,nosuch=1", error: `option "nosuch" is not supported`},
		{in: "a:1,b:2", error: "2 endpoints"},
		{in: "password=x", error: "no host:port"},
		{in: "h:1,ssl=maybe", error: `ssl="maybe"`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			o, err := parseRedisConnectionString(tc.in)
			if tc.error != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.error)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.addr, o.Addr)
			assert.Equal(t, tc.user, o.Username)
			assert.Equal(t, tc.pw, o.Password)
			if assert.Equal(t, tc.tls, o.TLSConfig != nil) && tc.tls {
				assert.Equal(t, tc.serverName, o.TLSConfig.ServerName)
				assert.Equal(t, uint16(tls.VersionTLS12), o.TLSConfig.MinVersion)
			}
		})
	}
	o, err := RedisConnection{ConnectionString: "rediss://:pw@host:6380/0"}.options()
	require.NoError(t, err)
	assert.Equal(t, "host:6380", o.Addr)
	assert.NotNil(t, o.TLSConfig)
}
