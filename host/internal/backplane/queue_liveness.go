package backplane

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/v2"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/v2/queueerror"

	"github.com/funcmcp/funcmcp/host/internal/backoff"
)

func beatMetadata(t time.Time) map[string]*string {
	v := strconv.FormatInt(t.UnixMilli(), 10)
	return map[string]*string{HeartbeatKey: &v}
}

// beatOf reads the heartbeat of queue metadata.
func beatOf(md map[string]*string) (time.Time, bool) {
	for k, v := range md {
		if strings.EqualFold(k, HeartbeatKey) && v != nil {
			ms, err := strconv.ParseInt(*v, 10, 64)
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
	if _, err := q.blobs.CreateContainer(ctx, q.QueueName(), nil); err != nil && !hasCode(err, string(bloberror.ContainerAlreadyExists)) {
		q.log.Warn("backplane: making the blob container again failed; a sender makes it when it needs it",
			"container", q.QueueName(), "error", shortError(err))
	}
}

func (q *Queue) createQueue(ctx context.Context) error {
	md := beatMetadata(time.Now())
	_, err := q.own.Create(ctx, &azqueue.CreateOptions{Metadata: md})
	if err != nil && !queueerror.HasCode(err, queueerror.QueueAlreadyExists) {
		return shortError(err)
	}
	if err != nil { // it exists, with other metadata
		if _, err := q.own.SetMetadata(ctx, &azqueue.SetMetadataOptions{Metadata: md}); err != nil {
			return shortError(err)
		}
	}
	return nil
}

// heartbeat writes the time into the queue's metadata every Heartbeat.
func (q *Queue) heartbeat(ctx context.Context) {
	keepBeating(ctx, q.opts.Heartbeat, nil, func(ctx context.Context) error {
		_, err := q.own.SetMetadata(ctx, &azqueue.SetMetadataOptions{Metadata: beatMetadata(time.Now())})
		if err != nil && queueerror.HasCode(err, queueerror.QueueNotFound) {
			q.recreate(ctx)
			return nil
		}
		return err
	}, func(failures int, err error) {
		q.log.Warn("backplane: writing the heartbeat failed; other instances will take this one for dead if it goes on",
			"queue", q.QueueName(), "failures", failures, "error", shortError(err))
	})
}

// cleanup removes, every CleanupBeats heartbeats, the queues and
// containers of instances whose heartbeat is older than RemoveBeats, and
// the blobs of this instance's container older than MessageTTL.
func (q *Queue) cleanup(ctx context.Context) {
	every := CleanupBeats * q.opts.Heartbeat
	first := q.opts.Heartbeat + rand.N(every)
	if !backoff.Sleep(ctx, first) {
		return
	}
	for {
		q.sweep(ctx, time.Now())
		if !backoff.Sleep(ctx, every/2+rand.N(every)) {
			return
		}
	}
}

// sweep is one cleanup pass.
func (q *Queue) sweep(ctx context.Context, now time.Time) {
	removeBefore := now.Add(-RemoveBeats * q.opts.Heartbeat)
	prefix := QueuePrefix
	known := map[string]bool{q.QueueName(): true}
	pager := q.svc.NewListQueuesPager(&azqueue.ListQueuesOptions{Prefix: &prefix, Include: azqueue.ListQueuesInclude{Metadata: true}})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			if ctx.Err() == nil {
				q.log.Warn("backplane: listing the instance queues failed", "error", shortError(err))
			}
			return
		}
		for _, item := range page.Queues {
			if item == nil || item.Name == nil {
				continue
			}
			name := *item.Name
			known[name] = true
			beat, ours := beatOf(item.Metadata)
			if !ours || name == q.QueueName() || beat.After(removeBefore) {
				continue
			}
			if _, err := q.svc.DeleteQueue(ctx, name, nil); err != nil && !queueerror.HasCode(err, queueerror.QueueNotFound) {
				q.log.Warn("backplane: removing the queue of a dead instance failed", "queue", name, "error", shortError(err))
				continue
			}
			delete(known, name)
			q.log.Info("backplane: removed the queue of a dead instance", "queue", name, "lastHeartbeat", beat.UTC().Format(time.RFC3339))
		}
	}
	if q.blobs == nil {
		return
	}
	cpager := q.blobs.NewListContainersPager(&azblob.ListContainersOptions{Prefix: &prefix})
	for cpager.More() {
		page, err := cpager.NextPage(ctx)
		if err != nil {
			return
		}
		for _, c := range page.ContainerItems {
			if c == nil || c.Name == nil || known[*c.Name] || c.Properties == nil || c.Properties.LastModified == nil ||
				c.Properties.LastModified.After(removeBefore) {
				continue
			}
			if _, err := q.blobs.DeleteContainer(ctx, *c.Name, nil); err == nil {
				q.log.Info("backplane: removed the blob container of a dead instance", "container", *c.Name)
			}
		}
	}
	expired := now.Add(-q.opts.MessageTTL)
	bpager := q.blobs.NewListBlobsFlatPager(q.QueueName(), nil)
	for bpager.More() {
		page, err := bpager.NextPage(ctx)
		if err != nil {
			return
		}
		if page.Segment == nil {
			continue
		}
		for _, b := range page.Segment.BlobItems {
			if b == nil || b.Name == nil || b.Properties == nil || b.Properties.LastModified == nil || b.Properties.LastModified.After(expired) {
				continue
			}
			q.deleteBlob(ctx, q.id, *b.Name)
		}
	}
}
