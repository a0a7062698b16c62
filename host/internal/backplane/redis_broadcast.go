package backplane

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisBroadcastChannel is the Redis channel broadcasts are published on.
// A message is the sending instance's id, '|', the broadcast's id, '|'
// and the bytes broadcast.
const RedisBroadcastChannel = RedisKeyPrefix + "broadcast"

// redisSubscriptionLifetime is how long one subscription connection
// serves before a fresh one (a fresh Microsoft Entra token) replaces it;
// the two overlap, and a broadcast both receive is dropped as a copy.
const redisSubscriptionLifetime = redisTokenLifetime

// Broadcast publishes wire on RedisBroadcastChannel, within
// OutcomeTimeout: every other instance subscribed receives it once. Redis
// pushes it to each subscriber; one that does not read is disconnected
// by the server's output buffer limit, never holding up the others.
func (r *Redis) Broadcast(ctx context.Context, wire []byte) error {
	if err := checkBroadcast(wire); err != nil {
		return err
	}
	r.mu.Lock()
	client := r.client
	r.mu.Unlock()
	if client == nil {
		return fmt.Errorf("broadcasting: the backplane is not started")
	}
	ctx, cancel := context.WithTimeout(ctx, r.opts.OutcomeTimeout)
	defer cancel()
	payload := make([]byte, 0, len(r.id)+28+len(wire))
	payload = append(payload, r.id...)
	payload = append(payload, '|')
	payload = append(payload, newBroadcastID()...)
	payload = append(payload, '|')
	payload = append(payload, wire...)
	if err := client.Publish(ctx, RedisBroadcastChannel, payload).Err(); err != nil {
		return fmt.Errorf("broadcasting: %w", err)
	}
	return nil
}

// subscribe subscribes a connection of its own to RedisBroadcastChannel
// and waits for the server's confirmation.
func (r *Redis) subscribe(ctx context.Context) (*redis.PubSub, error) {
	ps := r.client.Subscribe(ctx, RedisBroadcastChannel)
	if _, err := ps.Receive(ctx); err != nil {
		_ = ps.Close()
		return nil, err
	}
	return ps, nil
}

// listen hands what other instances broadcast to OnBroadcast until ctx
// ends, replacing its subscription every redisSubscriptionLifetime (a new
// one first, so that nothing published meanwhile is missed).
func (r *Redis) listen(ctx context.Context, ps *redis.PubSub) {
	defer func() { _ = ps.Close() }()
	renew := time.NewTimer(redisSubscriptionLifetime)
	defer renew.Stop()
	ch := ps.Channel(redis.WithChannelSize(broadcastBuffer))
	for {
		select {
		case <-ctx.Done():
			return
		case m, ok := <-ch:
			if !ok {
				return
			}
			r.takeBroadcast(m.Payload)
		case <-renew.C:
			sctx, cancel := context.WithTimeout(ctx, r.opts.OutcomeTimeout)
			next, err := r.subscribe(sctx)
			cancel()
			if err != nil {
				if ctx.Err() == nil {
					r.log.Warn("backplane: renewing the broadcast subscription failed; the old one goes on", "error", err)
				}
				renew.Reset(r.opts.Heartbeat)
				continue
			}
			old, oldCh := ps, ch
			ps, ch = next, next.Channel(redis.WithChannelSize(broadcastBuffer))
			// What the old one still holds is taken before it closes.
			for drained := false; !drained; {
				select {
				case m, ok := <-oldCh:
					if ok {
						r.takeBroadcast(m.Payload)
						continue
					}
				default:
				}
				drained = true
			}
			_ = old.Close()
			renew.Reset(redisSubscriptionLifetime)
		}
	}
}

// takeBroadcast hands one message of the channel to OnBroadcast, unless
// this instance sent it.
func (r *Redis) takeBroadcast(payload string) {
	from, rest, ok := strings.Cut(payload, "|")
	if !ok || from == r.id {
		return
	}
	id, wire, ok := strings.Cut(rest, "|")
	if !ok || !ValidMessageID(id) || len(wire) == 0 || len(wire) > MaxBroadcast {
		r.log.Debug("backplane: dropping a broadcast that does not decode")
		return
	}
	r.bcasts.offer(id, []byte(wire))
}
