package backplane

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/funcmcp/funcmcp/host/internal/backoff"
)

// Defaults of [RedisOptions].
const (
	DefaultRedisHeartbeat = 5 * time.Second
	// redisBlock is how long one BLPOP waits: an idle instance sends a
	// command that often.
	redisBlock = 5 * time.Second
	// redisBatch is how many more messages one receive takes at once.
	redisBatch = 64
)

// RedisKeyPrefix starts the keys of the Redis backplane: an instance's
// list is mcp-backplane:{<id>} and its heartbeat mcp-backplane:{<id>}:alive
// (one hash slot per instance).
const RedisKeyPrefix = "mcp-backplane:"

// RedisOptions configures [NewRedis]. A nil *RedisOptions means defaults.
type RedisOptions struct {
	// Heartbeat is how often the instance renews its heartbeat key, which
	// expires after StaleBeats heartbeats; default 5s.
	Heartbeat time.Duration
	// OutcomeTimeout bounds the wait for the outcome of a message sent;
	// default 10s.
	OutcomeTimeout time.Duration
	// MessageTTL is how long an instance's list outlives the last message
	// pushed to it; default 10m. The list of an instance found dead is
	// deleted by the sender that finds it.
	MessageTTL time.Duration
	// MaxRetryWait caps the pause between two failing receives; default 10s.
	MaxRetryWait time.Duration
	// Hold bounds what is held for streams whose inbox is full.
	Hold HoldOptions
	// Logger receives errors and dropped messages; nil discards.
	Logger *slog.Logger
	// OnBroadcast receives what other instances broadcast (see
	// [Redis.Broadcast]), one call at a time, off the receive loop; nil
	// drops it.
	OnBroadcast func(wire []byte)
}

// Redis is the Redis backplane: each instance pops its own list (BLPOP:
// a message is handed over as soon as it is pushed) and keeps a heartbeat
// key alive; a sender pushes only while that key exists.
type Redis struct {
	id   string
	conn string // the connection's name
	addr string
	opts RedisOptions
	log  *slog.Logger
	ro   *redis.Options

	client *redis.Client // commands
	recv   *redis.Client // the blocking receive; closed to end it

	waiting waiters
	in      *inbound
	bcasts  *fanIn      // hands broadcasts received to OnBroadcast
	lost    lossClock   // when the server had lost this instance's key
	beaten  atomic.Bool // the heartbeat key was set once
	beatCh  chan struct{}

	mu     sync.Mutex
	cancel context.CancelFunc
	loops  sync.WaitGroup
}

// push stores a message for an instance only while its heartbeat is
// fresh (not older than ARGV[4] ms at ARGV[3], Unix ms): it returns 1 when
// stored, 0 when the heartbeat key is gone (the instance is dead, or the
// server lost it), or the late heartbeat (Unix ms) itself. A dead or late
// instance gets nothing, and the sender hears of it at once.
var push = redis.NewScript(`
local beat = redis.call('GET', KEYS[2])
if not beat then return 0 end
beat = tonumber(beat) or 0
if tonumber(ARGV[3]) - beat > tonumber(ARGV[4]) then return math.max(beat, 2) end
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`)

func redisList(id string) string  { return RedisKeyPrefix + "{" + id + "}" }
func redisAlive(id string) string { return redisList(id) + ":alive" }

// NewRedis returns the backplane of instance id on the Redis server c
// names. It does not contact the server: Start does.
func NewRedis(id string, c RedisConnection, opts *RedisOptions) (*Redis, error) {
	var o RedisOptions
	if opts != nil {
		o = *opts
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = DefaultRedisHeartbeat
	}
	if o.OutcomeTimeout <= 0 {
		o.OutcomeTimeout = DefaultOutcomeTimeout
	}
	if o.MessageTTL <= 0 {
		o.MessageTTL = DefaultMessageTTL
	}
	if o.MaxRetryWait <= 0 {
		o.MaxRetryWait = DefaultMaxRetryWait
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Name == "" {
		c.Name = "the Redis connection"
	}
	if !ValidInstanceID(id) {
		return nil, fmt.Errorf("creating the backplane: instance id %q is not 1-49 lower-case letters and digits", id)
	}
	ro, err := c.options()
	if err != nil {
		return nil, fmt.Errorf("creating the backplane: %w", err)
	}
	return &Redis{id: id, conn: c.Name, addr: ro.Addr, opts: o, log: o.Logger, ro: ro, beatCh: make(chan struct{}, 1),
		bcasts: newFanIn("redis "+redisList(id), o.OnBroadcast, o.Logger)}, nil
}

// Start connects, sets the heartbeat and starts receiving. An unreachable
// server fails here, naming the connection and the address.
func (r *Redis) Start(ctx context.Context, deliver Deliver) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		return errors.New("starting the backplane: already started")
	}
	client := redis.NewClient(r.ro)
	if err := r.beat(ctx, client); err != nil {
		_ = client.Close()
		return fmt.Errorf("starting the backplane: connection %s (%s): %w", r.conn, r.addr, err)
	}
	recvOpts := *r.ro
	recvOpts.PoolSize = 1
	r.client, r.recv = client, redis.NewClient(&recvOpts)
	var ps *redis.PubSub
	if r.opts.OnBroadcast != nil {
		var err error
		if ps, err = r.subscribe(ctx); err != nil {
			_ = r.client.Close()
			_ = r.recv.Close()
			r.client, r.recv = nil, nil
			return fmt.Errorf("starting the backplane: subscribing to %s with connection %s (%s): %w", RedisBroadcastChannel, r.conn, r.addr, err)
		}
	}
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.cancel = cancel
	r.in = newInbound("redis "+redisList(r.id), deliver, r.opts.Hold, r.log)
	r.in.start(lctx)
	r.bcasts.start()
	r.loops.Go(func() { r.receive(lctx) })
	if ps != nil {
		r.loops.Go(func() { r.listen(lctx, ps) })
	}
	r.loops.Go(func() { r.heartbeat(lctx) })
	return nil
}

// beat renews the heartbeat key, which expires after DeadBeats
// heartbeats. A key found gone after the first beat was lost by the server
// (restarted empty), or this instance was silent for DeadBeats
// heartbeats: that is noted (see lossClock).
func (r *Redis) beat(ctx context.Context, c *redis.Client) error {
	_, err := c.SetArgs(ctx, redisAlive(r.id), strconv.FormatInt(time.Now().UnixMilli(), 10),
		redis.SetArgs{TTL: DeadBeats * r.opts.Heartbeat, Get: true}).Result()
	switch {
	case errors.Is(err, redis.Nil):
		if r.beaten.Swap(true) {
			r.lost.mark()
			r.log.Warn("backplane: the heartbeat key was gone; made it again", "key", redisAlive(r.id))
		}
		return nil
	case err != nil:
		return err
	}
	r.beaten.Store(true)
	return nil
}

// beatNow has the heartbeat loop beat at once.
func (r *Redis) beatNow() {
	select {
	case r.beatCh <- struct{}{}:
	default:
	}
}

// Stop ends receiving and deletes the instance's keys.
func (r *Redis) Stop(ctx context.Context) error {
	r.mu.Lock()
	cancel := r.cancel
	r.cancel = nil
	r.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	_ = r.recv.Close() // ends a BLPOP under way
	r.loops.Wait()
	r.in.stop()
	r.bcasts.stop()
	err := r.client.Del(ctx, redisAlive(r.id), redisList(r.id)).Err()
	_ = r.client.Close()
	if err != nil {
		return fmt.Errorf("stopping the backplane: deleting the keys of instance %s: %w", r.id, err)
	}
	return nil
}

// halt ends receiving and the heartbeat as a killed process would: the
// keys stay until they expire. For tests.
func (r *Redis) halt() {
	r.mu.Lock()
	cancel := r.cancel
	r.cancel = nil
	r.mu.Unlock()
	if cancel != nil {
		cancel()
		_ = r.recv.Close()
		r.loops.Wait()
		r.in.stop()
		r.bcasts.stop()
	}
}

// Send pushes m onto the list of instance to and waits for its outcome,
// all within OutcomeTimeout.
func (r *Redis) Send(ctx context.Context, to string, m Message) (Outcome, error) {
	if err := checkSend(to, m); err != nil {
		return 0, err
	}
	sctx, cancel := context.WithTimeout(ctx, r.opts.OutcomeTimeout)
	defer cancel()
	out, err := r.send(sctx, to, m)
	return out, sendError(ctx, sctx, to, err)
}

func (r *Redis) send(ctx context.Context, to string, m Message) (Outcome, error) {
	env := envelope{ID: m.ID, ClientID: m.ClientID, Message: m.Body, From: r.id}
	env.stamp(&m)
	data, err := json.Marshal(&env)
	if err != nil {
		return 0, fmt.Errorf("encoding the message: %w", err)
	}
	ch := r.waiting.add(m.ID)
	defer r.waiting.remove(m.ID)
	now := time.Now()
	res, err := push.Run(ctx, r.client, []string{redisList(to), redisAlive(to)}, data, r.opts.MessageTTL.Milliseconds(),
		now.UnixMilli(), (StaleBeats * r.opts.Heartbeat).Milliseconds()).Int64()
	switch {
	case err != nil:
		return 0, err
	case res == 0:
		return 0, r.missing(ctx, to)
	case res > 1:
		err := verdict(to, time.UnixMilli(res), r.opts.Heartbeat)
		if errors.Is(err, ErrUnknownInstance) {
			_ = r.client.Del(ctx, redisList(to)).Err()
		}
		if err == nil { // a clock ahead of this one's
			err = &UnsureError{Instance: to, LastSeen: time.UnixMilli(res)}
		}
		return 0, err
	}
	return awaitOutcome(ctx, ch, r.opts.Heartbeat, func(ctx context.Context) error {
		v, err := r.client.Get(ctx, redisAlive(to)).Result()
		switch {
		case errors.Is(err, redis.Nil):
			return r.missing(ctx, to)
		case err != nil:
			return err
		}
		ms, _ := strconv.ParseInt(v, 10, 64)
		return verdict(to, time.UnixMilli(ms), r.opts.Heartbeat)
	})
}

// missing judges a peer whose heartbeat key is not there: gone (its list
// is deleted: nothing will read it), unless the server lost this
// instance's key too (it was restarted empty), or did a short while ago:
// every live instance is making its key again then.
func (r *Redis) missing(ctx context.Context, to string) error {
	if r.lost.recent(r.opts.Heartbeat) {
		return &UnsureError{Instance: to}
	}
	n, err := r.client.Exists(ctx, redisAlive(r.id)).Result()
	switch {
	case err != nil:
		return err
	case n == 0:
		r.lost.mark()
		r.beatNow()
		return &UnsureError{Instance: to}
	}
	_ = r.client.Del(ctx, redisList(to)).Err()
	return &InstanceGoneError{Instance: to}
}

// awaitOutcome waits for the outcome of a message sent, until ctx ends
// (its deadline is the outcome timeout), checking every recheck that the
// instance it went to still lives.
func awaitOutcome(ctx context.Context, ch <-chan Outcome, recheck time.Duration, alive func(context.Context) error) (Outcome, error) {
	tick := time.NewTicker(recheck)
	defer tick.Stop()
	for {
		select {
		case out := <-ch:
			return out, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-tick.C:
			// A long wait: the instance may have died since.
			if err := alive(ctx); errors.Is(err, ErrUnknownInstance) {
				return 0, err
			}
		}
	}
}

// receive pops this instance's list until ctx is done.
func (r *Redis) receive(ctx context.Context) {
	key := redisList(r.id)
	failures := 0
	retries := backoff.Doubling{First: 200 * time.Millisecond, Max: r.opts.MaxRetryWait}
	for ctx.Err() == nil {
		res, err := r.recv.BLPop(ctx, redisBlock, key).Result()
		if errors.Is(err, redis.Nil) {
			continue
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			retry := retries.Next()
			if failures == 1 || failures%10 == 0 {
				r.log.Warn("backplane: receiving from Redis failed; retrying", "list", key, "connection", r.conn, "failures", failures, "retryIn", retry, "error", err)
			}
			backoff.Sleep(ctx, retry)
			continue
		}
		if failures > 0 {
			r.log.Info("backplane: Redis reachable again", "list", key, "failures", failures)
			failures = 0
			retries.Reset()
		}
		if len(res) == 2 {
			r.handle(ctx, res[1])
		}
		more, err := r.recv.LPopCount(ctx, key, redisBatch).Result()
		if err == nil {
			for _, v := range more {
				r.handle(ctx, v)
			}
		}
	}
}

// handle acts on one popped message.
func (r *Redis) handle(ctx context.Context, raw string) {
	env, err := decodeEnvelopeJSON([]byte(raw))
	if err != nil {
		r.log.Error("backplane: dropping a message that does not decode", "list", redisList(r.id), "error", err)
		return
	}
	if env.isOutcome() {
		out, _ := parseOutcome(env.Outcome)
		r.waiting.resolve(env.ID, out)
		return
	}
	out, answer := r.in.offer(ctx, env.message(), func() {})
	if !answer || env.From == "" || !ValidInstanceID(env.From) {
		return
	}
	if env.From == r.id {
		r.waiting.resolve(env.ID, out)
		return
	}
	data, err := json.Marshal(&envelope{ID: env.ID, Outcome: out.String()})
	if err != nil {
		return
	}
	_, err = r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.RPush(ctx, redisList(env.From), data)
		p.PExpire(ctx, redisList(env.From), r.opts.MessageTTL)
		return nil
	})
	if err != nil && ctx.Err() == nil {
		r.log.Warn("backplane: telling the sender what became of a message failed", "to", env.From, "id", env.ID, "outcome", out, "error", err)
	}
}

// heartbeat renews the heartbeat key every Heartbeat.
func (r *Redis) heartbeat(ctx context.Context) {
	keepBeating(ctx, r.opts.Heartbeat, r.beatCh, func(ctx context.Context) error { return r.beat(ctx, r.client) },
		func(failures int, err error) {
			r.log.Warn("backplane: renewing the heartbeat failed; other instances will take this one for dead if it goes on",
				"key", redisAlive(r.id), "failures", failures, "error", err)
		})
}
