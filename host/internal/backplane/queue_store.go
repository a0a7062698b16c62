package backplane

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/v2"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/v2/queueerror"
)

// The queue backplane reaches storage through two small interfaces, one
// for the queue service and one for the blob service: the Azure clients
// behind them in production (azureQueues, azureBlobs), an in-memory store
// in tests, so that what the backplane does with full inboxes, dead
// owners, large messages and order is tested without storage.

// The storage conditions the backplane acts on. The stores return errors
// matching them (errors.Is); any other error is a storage failure.
var (
	errQueueNotFound     = errors.New("the queue does not exist")
	errQueueExists       = errors.New("the queue exists")
	errContainerNotFound = errors.New("the container does not exist")
	errContainerExists   = errors.New("the container exists")
	errBlobNotFound      = errors.New("the blob does not exist")
)

// queued is one message received from a queue.
type queued struct {
	ID, Pop, Text string
}

// listed is one queue of a listing, or one container or blob.
type listed struct {
	Name     string
	Metadata map[string]string // queues
	Modified time.Time         // containers and blobs; zero when unknown
}

// queueStore is the queue service of a storage account.
type queueStore interface {
	// Create makes queue name with metadata md; errQueueExists when it is
	// there already.
	Create(ctx context.Context, name string, md map[string]string) error
	SetMetadata(ctx context.Context, name string, md map[string]string) error
	Metadata(ctx context.Context, name string) (map[string]string, error)
	Delete(ctx context.Context, name string) error
	Enqueue(ctx context.Context, name, text string, ttl time.Duration) error
	// Dequeue receives up to n messages, hidden for visibility.
	Dequeue(ctx context.Context, name string, n int, visibility time.Duration) ([]queued, error)
	DeleteMessage(ctx context.Context, name, id, pop string) error
	// List returns the queues whose name starts with prefix, with their
	// metadata.
	List(ctx context.Context, prefix string) ([]listed, error)
	// URL is the service URL, without a query (for messages).
	URL() string
}

// blobStore is the blob service of a storage account.
type blobStore interface {
	CreateContainer(ctx context.Context, name string) error
	DeleteContainer(ctx context.Context, name string) error
	Upload(ctx context.Context, container, name string, body []byte) error
	// Download reads a blob of at most limit bytes; a larger one is an
	// error.
	Download(ctx context.Context, container, name string, limit int64) ([]byte, error)
	DeleteBlob(ctx context.Context, container, name string) error
	ListContainers(ctx context.Context, prefix string) ([]listed, error)
	ListBlobs(ctx context.Context, container string) ([]listed, error)
}

// storeError is a storage error that matches one of the conditions above.
type storeError struct {
	is  error
	err error
}

func (e *storeError) Error() string        { return e.err.Error() }
func (e *storeError) Unwrap() error        { return e.err }
func (e *storeError) Is(target error) bool { return target == e.is }

// azureQueues is the queue service through the Azure SDK.
type azureQueues struct{ svc *azqueue.ServiceClient }

// queueErr gives a short storage error, matching the conditions the
// backplane acts on.
func queueErr(err error) error {
	switch {
	case err == nil:
		return nil
	case queueerror.HasCode(err, queueerror.QueueNotFound):
		return &storeError{errQueueNotFound, shortError(err)}
	case queueerror.HasCode(err, queueerror.QueueAlreadyExists):
		return &storeError{errQueueExists, shortError(err)}
	}
	return shortError(err)
}

func toPtrs(md map[string]string) map[string]*string {
	out := make(map[string]*string, len(md))
	for k, v := range md {
		out[k] = &v
	}
	return out
}

func fromPtrs(md map[string]*string) map[string]string {
	out := make(map[string]string, len(md))
	for k, v := range md {
		if v != nil {
			out[k] = *v
		}
	}
	return out
}

func (a azureQueues) Create(ctx context.Context, name string, md map[string]string) error {
	_, err := a.svc.NewQueueClient(name).Create(ctx, &azqueue.CreateOptions{Metadata: toPtrs(md)})
	return queueErr(err)
}

func (a azureQueues) SetMetadata(ctx context.Context, name string, md map[string]string) error {
	_, err := a.svc.NewQueueClient(name).SetMetadata(ctx, &azqueue.SetMetadataOptions{Metadata: toPtrs(md)})
	return queueErr(err)
}

func (a azureQueues) Metadata(ctx context.Context, name string) (map[string]string, error) {
	props, err := a.svc.NewQueueClient(name).GetProperties(ctx, nil)
	if err != nil {
		return nil, queueErr(err)
	}
	return fromPtrs(props.Metadata), nil
}

func (a azureQueues) Delete(ctx context.Context, name string) error {
	_, err := a.svc.DeleteQueue(ctx, name, nil)
	return queueErr(err)
}

func (a azureQueues) Enqueue(ctx context.Context, name, text string, ttl time.Duration) error {
	secs := int32(max(ttl/time.Second, 1))
	_, err := a.svc.NewQueueClient(name).EnqueueMessage(ctx, text, &azqueue.EnqueueMessageOptions{TimeToLive: &secs})
	return queueErr(err)
}

func (a azureQueues) Dequeue(ctx context.Context, name string, n int, visibility time.Duration) ([]queued, error) {
	num, vis := int32(n), int32(max(visibility/time.Second, 1))
	resp, err := a.svc.NewQueueClient(name).DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: &num, VisibilityTimeout: &vis})
	if err != nil {
		return nil, queueErr(err)
	}
	out := make([]queued, 0, len(resp.Messages))
	for _, dm := range resp.Messages {
		if dm == nil || dm.MessageID == nil || dm.PopReceipt == nil {
			continue
		}
		m := queued{ID: *dm.MessageID, Pop: *dm.PopReceipt}
		if dm.MessageText != nil {
			m.Text = *dm.MessageText
		}
		out = append(out, m)
	}
	return out, nil
}

func (a azureQueues) DeleteMessage(ctx context.Context, name, id, pop string) error {
	_, err := a.svc.NewQueueClient(name).DeleteMessage(ctx, id, pop, nil)
	return queueErr(err)
}

func (a azureQueues) List(ctx context.Context, prefix string) ([]listed, error) {
	var out []listed
	pager := a.svc.NewListQueuesPager(&azqueue.ListQueuesOptions{Prefix: &prefix, Include: azqueue.ListQueuesInclude{Metadata: true}})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, queueErr(err)
		}
		for _, item := range page.Queues {
			if item != nil && item.Name != nil {
				out = append(out, listed{Name: *item.Name, Metadata: fromPtrs(item.Metadata)})
			}
		}
	}
	return out, nil
}

func (a azureQueues) URL() string { return redactedURL(a.svc.URL()) }

// azureBlobs is the blob service through the Azure SDK.
type azureBlobs struct{ c *azblob.Client }

func blobErr(err error) error {
	switch {
	case err == nil:
		return nil
	case hasCode(err, string(bloberror.ContainerNotFound)):
		return &storeError{errContainerNotFound, shortError(err)}
	case hasCode(err, string(bloberror.ContainerAlreadyExists)):
		return &storeError{errContainerExists, shortError(err)}
	case hasCode(err, string(bloberror.BlobNotFound)):
		return &storeError{errBlobNotFound, shortError(err)}
	}
	return shortError(err)
}

func (a azureBlobs) CreateContainer(ctx context.Context, name string) error {
	_, err := a.c.CreateContainer(ctx, name, nil)
	return blobErr(err)
}

func (a azureBlobs) DeleteContainer(ctx context.Context, name string) error {
	_, err := a.c.DeleteContainer(ctx, name, nil)
	return blobErr(err)
}

func (a azureBlobs) Upload(ctx context.Context, container, name string, body []byte) error {
	_, err := a.c.UploadBuffer(ctx, container, name, body, nil)
	return blobErr(err)
}

func (a azureBlobs) Download(ctx context.Context, container, name string, limit int64) ([]byte, error) {
	resp, err := a.c.DownloadStream(ctx, container, name, nil)
	if err != nil {
		return nil, blobErr(err)
	}
	defer resp.Body.Close()
	return readAtMost(resp.Body, limit)
}

func (a azureBlobs) DeleteBlob(ctx context.Context, container, name string) error {
	_, err := a.c.DeleteBlob(ctx, container, name, nil)
	return blobErr(err)
}

func (a azureBlobs) ListContainers(ctx context.Context, prefix string) ([]listed, error) {
	var out []listed
	pager := a.c.NewListContainersPager(&azblob.ListContainersOptions{Prefix: &prefix})
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, blobErr(err)
		}
		for _, c := range page.ContainerItems {
			if c == nil || c.Name == nil {
				continue
			}
			l := listed{Name: *c.Name}
			if c.Properties != nil && c.Properties.LastModified != nil {
				l.Modified = *c.Properties.LastModified
			}
			out = append(out, l)
		}
	}
	return out, nil
}

func (a azureBlobs) ListBlobs(ctx context.Context, container string) ([]listed, error) {
	var out []listed
	pager := a.c.NewListBlobsFlatPager(container, nil)
	for pager.More() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, blobErr(err)
		}
		if page.Segment == nil {
			continue
		}
		for _, b := range page.Segment.BlobItems {
			if b == nil || b.Name == nil {
				continue
			}
			l := listed{Name: *b.Name}
			if b.Properties != nil && b.Properties.LastModified != nil {
				l.Modified = *b.Properties.LastModified
			}
			out = append(out, l)
		}
	}
	return out, nil
}

// errTooLarge: a blob larger than the reader's limit.
var errTooLarge = errors.New("the blob is too large")

// readAtMost reads r up to limit bytes; more is errTooLarge.
func readAtMost(r io.Reader, limit int64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, errTooLarge
	}
	return data, nil
}
