package backplane

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/backoff"
)

func beatMetadata(t time.Time) map[string]string {
	return map[string]string{HeartbeatKey: strconv.FormatInt(t.UnixMilli(), 10)}
}

// beatOf reads the heartbeat of queue metadata.
func beatOf(md map[string]string) (time.Time, bool) {
	for k, v := range md {
		if strings.EqualFold(k, HeartbeatKey) {
			ms, err := strconv.ParseInt(v, 10, 64)
			if err == nil {
				return time.UnixMilli(ms), true
			}
		}
	}
	return time.Time{}, false
}

// recreate makes the queue and the container of this instance again:
// storage lost them (it was restarted empty, or another instance swept
// this one as dead while it was paused).
func (q *Queue) recreate(ctx context.Context) {
	q.lost.mark()
	if err := q.createQueue(ctx); err != nil {
		q.log.Warn("backplane: the queue was gone; making it again failed", "queue", q.QueueName(), "error", err)
		return
	}
	q.log.Warn("backplane: the queue was gone; made it again", "queue", q.QueueName())
	if q.blobs == nil {
		return
	}
	if err := q.blobs.CreateContainer(ctx, q.QueueName()); err != nil && !errors.Is(err, errContainerExists) {
		q.log.Warn("backplane: making the blob container again failed; a sender makes it when it needs it",
			"container", q.QueueName(), "error", err)
	}
}

func (q *Queue) createQueue(ctx context.Context) error {
	md := beatMetadata(time.Now())
	err := q.queues.Create(ctx, q.QueueName(), md)
	if err != nil && !errors.Is(err, errQueueExists) {
		return err
	}
	if err != nil { // it exists, with other metadata
		return q.queues.SetMetadata(ctx, q.QueueName(), md)
	}
	return nil
}

// heartbeat writes the time into the queue's metadata every Heartbeat.
func (q *Queue) heartbeat(ctx context.Context) {
	keepBeating(ctx, q.opts.Heartbeat, nil, func(ctx context.Context) error {
		err := q.queues.SetMetadata(ctx, q.QueueName(), beatMetadata(time.Now()))
		if errors.Is(err, errQueueNotFound) {
			q.recreate(ctx)
			return nil
		}
		return err
	}, func(failures int, err error) {
		q.log.Warn("backplane: writing the heartbeat failed; other instances will take this one for dead if it goes on",
			"queue", q.QueueName(), "failures", failures, "error", err)
	})
}

// cleanup removes, every CleanupBeats heartbeats, the queues and
// containers of instances whose heartbeat is older than RemoveBeats, and
// the blobs of this instance's container older than MessageTTL. Each pass
// ends within half the time between two.
func (q *Queue) cleanup(ctx context.Context) {
	every := CleanupBeats * q.opts.Heartbeat
	first := q.opts.Heartbeat + rand.N(every)
	if !backoff.Sleep(ctx, first) {
		return
	}
	for {
		sctx, cancel := context.WithTimeout(ctx, every/2)
		q.sweep(sctx, time.Now())
		cancel()
		if !backoff.Sleep(ctx, every/2+rand.N(every)) {
			return
		}
	}
}

// sweep is one cleanup pass.
func (q *Queue) sweep(ctx context.Context, now time.Time) {
	removeBefore := now.Add(-RemoveBeats * q.opts.Heartbeat)
	known := map[string]bool{q.QueueName(): true}
	queues, err := q.queues.List(ctx, QueuePrefix)
	if err != nil {
		if ctx.Err() == nil {
			q.log.Warn("backplane: listing the instance queues failed", "error", err)
		}
		return
	}
	for _, item := range queues {
		known[item.Name] = true
		beat, ours := beatOf(item.Metadata)
		if !ours || item.Name == q.QueueName() || beat.After(removeBefore) {
			continue
		}
		if err := q.queues.Delete(ctx, item.Name); err != nil && !errors.Is(err, errQueueNotFound) {
			q.log.Warn("backplane: removing the queue of a dead instance failed", "queue", item.Name, "error", err)
			continue
		}
		delete(known, item.Name)
		q.log.Info("backplane: removed the queue of a dead instance", "queue", item.Name, "lastHeartbeat", beat.UTC().Format(time.RFC3339))
	}
	if q.blobs == nil {
		return
	}
	containers, err := q.blobs.ListContainers(ctx, QueuePrefix)
	if err != nil {
		return
	}
	for _, c := range containers {
		if known[c.Name] || c.Modified.IsZero() || c.Modified.After(removeBefore) {
			continue
		}
		if err := q.blobs.DeleteContainer(ctx, c.Name); err == nil {
			q.log.Info("backplane: removed the blob container of a dead instance", "container", c.Name)
		}
	}
	expired := now.Add(-q.opts.MessageTTL)
	blobs, err := q.blobs.ListBlobs(ctx, q.QueueName())
	if err != nil {
		return
	}
	for _, b := range blobs {
		if b.Modified.IsZero() || b.Modified.After(expired) {
			continue
		}
		q.deleteBlob(ctx, q.id, b.Name)
	}
}
