package backplane

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/v2"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azqueue/v2/queueerror"

	"github.com/funcmcp/funcmcp/host/internal/backoff"
	"github.com/funcmcp/funcmcp/host/internal/dedup"
)

// DevelopmentStorage is what "UseDevelopmentStorage=true" stands for: the
// storage emulator's well-known account on its default queue port.
const DevelopmentStorage = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;" +
	"AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;" +
	"QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1"

// Defaults of [QueueOptions].
const (
	DefaultVisibilityTimeout = 30 * time.Second
	DefaultMaxIdleWait       = 1500 * time.Millisecond
	DefaultMaxRetryWait      = 10 * time.Second
	DefaultMessageTTL        = 10 * time.Minute

	idleStep   = 100 * time.Millisecond
	batchSize  = 32
	seenWindow = 8192
)

// QueueOptions configures [NewQueue]. A nil *QueueOptions means defaults.
type QueueOptions struct {
	// ConnectionName names the connection in messages, e.g.
	// "AzureWebJobsStorage"; it never includes the secret.
	ConnectionName string
	// VisibilityTimeout is how long a received message stays hidden before
	// it comes back if it was not deleted; default 30s.
	VisibilityTimeout time.Duration
	// MaxIdleWait caps the pause between two empty polls; default 1.5s.
	// Each empty poll waits 100 ms longer than the one before, up to it.
	MaxIdleWait time.Duration
	// MaxRetryWait caps the pause between two failing polls; default 10s.
	MaxRetryWait time.Duration
	// MessageTTL is how long an undelivered message stays in a queue;
	// default 10m.
	MessageTTL time.Duration
	// Logger receives storage errors and dropped messages; nil discards.
	Logger *slog.Logger
}

// Queue is the Azure Storage Queues backplane.
type Queue struct {
	id      string
	opts    QueueOptions
	svc     *azqueue.ServiceClient
	own     *azqueue.QueueClient
	account string // the service URL without query, for messages
	log     *slog.Logger
	seen    *dedup.Window

	clients sync.Map // instance id → *azqueue.QueueClient, while the instance's queue exists

	// del deletes a received message; tests replace it to inject faults.
	del func(ctx context.Context, id, pop string) error

	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

// NewQueue returns the backplane of instance id on the storage account of
// connectionString ("UseDevelopmentStorage=true" means the local emulator).
// It does not contact storage: Start does.
func NewQueue(id, connectionString string, opts *QueueOptions) (*Queue, error) {
	var o QueueOptions
	if opts != nil {
		o = *opts
	}
	if o.ConnectionName == "" {
		o.ConnectionName = "the storage connection"
	}
	if o.VisibilityTimeout <= 0 {
		o.VisibilityTimeout = DefaultVisibilityTimeout
	}
	if o.MaxIdleWait <= 0 {
		o.MaxIdleWait = DefaultMaxIdleWait
	}
	if o.MaxRetryWait <= 0 {
		o.MaxRetryWait = DefaultMaxRetryWait
	}
	if o.MessageTTL <= 0 {
		o.MessageTTL = DefaultMessageTTL
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if !ValidInstanceID(id) {
		return nil, fmt.Errorf("creating the backplane: instance id %q is not 1-49 lower-case letters and digits", id)
	}
	cs := strings.TrimSpace(connectionString)
	if cs == "" {
		return nil, fmt.Errorf("creating the backplane: connection %s is not set", o.ConnectionName)
	}
	if strings.EqualFold(strings.TrimRight(cs, ";"), "UseDevelopmentStorage=true") {
		cs = DevelopmentStorage
	}
	svc, err := azqueue.NewServiceClientFromConnectionString(cs, &azqueue.ClientOptions{
		ClientOptions: policy.ClientOptions{
			Retry: policy.RetryOptions{
				MaxRetries:    2,
				TryTimeout:    10 * time.Second,
				RetryDelay:    200 * time.Millisecond,
				MaxRetryDelay: 2 * time.Second,
			},
			Telemetry: policy.TelemetryOptions{Disabled: true},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the backplane: connection %s: %w", o.ConnectionName, err)
	}
	q := &Queue{
		id:      id,
		opts:    o,
		svc:     svc,
		own:     svc.NewQueueClient(QueuePrefix + id),
		account: redactedURL(svc.URL()),
		log:     o.Logger,
		seen:    dedup.NewWindow(seenWindow),
	}
	q.del = func(ctx context.Context, msgID, pop string) error {
		_, err := q.own.DeleteMessage(ctx, msgID, pop, nil)
		return err
	}
	return q, nil
}

// redactedURL drops the query (a SAS) of a service URL.
func redactedURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	u.RawQuery = ""
	return u.String()
}

// QueueName is the name of this instance's queue.
func (q *Queue) QueueName() string { return QueuePrefix + q.id }

// Start creates the instance's queue (an existing one is kept) and starts
// the receive loop. Unreachable storage fails here, naming the connection.
func (q *Queue) Start(ctx context.Context, deliver Deliver) error {
	if err := q.createQueue(ctx); err != nil {
		return fmt.Errorf("starting the backplane: creating queue %s with connection %s (%s): %w",
			q.QueueName(), q.opts.ConnectionName, q.account, err)
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.cancel != nil {
		return errors.New("starting the backplane: already started")
	}
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	q.cancel, q.done = cancel, make(chan struct{})
	go q.receive(lctx, deliver)
	return nil
}

func (q *Queue) createQueue(ctx context.Context) error {
	_, err := q.own.Create(ctx, nil)
	if err != nil && !queueerror.HasCode(err, queueerror.QueueAlreadyExists) {
		return shortError(err)
	}
	return nil
}

// Stop ends the receive loop and deletes the instance's queue.
func (q *Queue) Stop(ctx context.Context) error {
	q.mu.Lock()
	cancel, done := q.cancel, q.done
	q.cancel = nil
	q.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	if _, err := q.own.Delete(ctx, nil); err != nil && !queueerror.HasCode(err, queueerror.QueueNotFound) {
		return fmt.Errorf("stopping the backplane: deleting queue %s: %w", q.QueueName(), shortError(err))
	}
	return nil
}

// Send stores m in the queue of instance instanceID.
func (q *Queue) Send(ctx context.Context, instanceID string, m Message) error {
	if !ValidInstanceID(instanceID) {
		return fmt.Errorf("sending to instance %q: %w", instanceID, ErrUnknownInstance)
	}
	body, err := json.Marshal(&m)
	if err != nil {
		return fmt.Errorf("sending to instance %q: encoding the message: %w", instanceID, err)
	}
	c, ok := q.clients.Load(instanceID)
	if !ok {
		c, _ = q.clients.LoadOrStore(instanceID, q.svc.NewQueueClient(QueuePrefix+instanceID))
	}
	ttl := int32(q.opts.MessageTTL / time.Second)
	_, err = c.(*azqueue.QueueClient).EnqueueMessage(ctx, base64.StdEncoding.EncodeToString(body),
		&azqueue.EnqueueMessageOptions{TimeToLive: &ttl})
	if err != nil {
		if queueerror.HasCode(err, queueerror.QueueNotFound) {
			// The instance is gone for good (its id is never reused): forget
			// its client, or the map grows with every instance ever seen.
			q.clients.Delete(instanceID)
			return fmt.Errorf("sending to instance %q: %w", instanceID, ErrUnknownInstance)
		}
		return fmt.Errorf("sending to instance %q: %w", instanceID, shortError(err))
	}
	return nil
}

// receive polls the instance's queue until ctx is done: right away while
// messages come, 100 ms more after each empty poll up to MaxIdleWait, and
// with doubling pauses up to MaxRetryWait while storage fails.
func (q *Queue) receive(ctx context.Context, deliver Deliver) {
	defer close(q.done)
	vis := int32(max(q.opts.VisibilityTimeout/time.Second, 1))
	n := int32(batchSize)
	idle, failures := 0, 0
	retries := backoff.Doubling{First: 200 * time.Millisecond, Max: q.opts.MaxRetryWait}
	for ctx.Err() == nil {
		resp, err := q.own.DequeueMessages(ctx, &azqueue.DequeueMessagesOptions{NumberOfMessages: &n, VisibilityTimeout: &vis})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			retry := retries.Next()
			if failures == 1 || failures%10 == 0 {
				q.log.Warn("backplane: receiving from storage failed; retrying",
					"queue", q.QueueName(), "connection", q.opts.ConnectionName, "failures", failures, "retryIn", retry, "error", shortError(err))
			}
			if queueerror.HasCode(err, queueerror.QueueNotFound) {
				if cerr := q.createQueue(ctx); cerr == nil {
					q.log.Warn("backplane: the queue was gone; created it again", "queue", q.QueueName())
				}
			}
			backoff.Sleep(ctx, retry)
			continue
		}
		if failures > 0 {
			q.log.Info("backplane: storage reachable again", "queue", q.QueueName(), "failures", failures)
			failures = 0
			retries.Reset()
		}
		if len(resp.Messages) == 0 {
			idle++
			backoff.Sleep(ctx, min(time.Duration(idle)*idleStep, q.opts.MaxIdleWait))
			continue
		}
		idle = 0
		for _, dm := range resp.Messages {
			q.handle(ctx, dm, deliver)
		}
	}
}

// handle delivers one received message unless it is a duplicate or
// undecodable, then deletes it.
func (q *Queue) handle(ctx context.Context, dm *azqueue.DequeuedMessage, deliver Deliver) {
	if dm == nil || dm.MessageID == nil || dm.PopReceipt == nil {
		return
	}
	var text string
	if dm.MessageText != nil {
		text = *dm.MessageText
	}
	m, err := decodeBody(text)
	switch {
	case err != nil:
		q.log.Error("backplane: dropping a message that does not decode", "queue", q.QueueName(), "messageId", *dm.MessageID, "error", err)
	default:
		key := m.ID
		if key == "" {
			key = *dm.MessageID
		}
		if q.seen.Add(key) {
			deliver(ctx, m)
		} else {
			q.log.Debug("backplane: dropping a duplicate", "queue", q.QueueName(), "id", key)
		}
	}
	if err := q.del(ctx, *dm.MessageID, *dm.PopReceipt); err != nil && ctx.Err() == nil {
		q.log.Warn("backplane: deleting a handled message failed; its copy will be dropped",
			"queue", q.QueueName(), "messageId", *dm.MessageID, "error", shortError(err))
	}
}

// decodeBody reads a queue message: base64 of the JSON, or the JSON itself.
func decodeBody(text string) (Message, error) {
	var m Message
	data, err := base64.StdEncoding.DecodeString(strings.TrimSpace(text))
	if err != nil {
		data = []byte(text)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return Message{}, fmt.Errorf("decoding the message: %w", err)
	}
	if m.ClientID == "" || len(m.Body) == 0 || string(m.Body) == "null" {
		return Message{}, errors.New("decoding the message: ClientId and Message are required")
	}
	return m, nil
}

// shortError keeps the first line of a storage error: azcore's response
// errors run over many lines.
func shortError(err error) error {
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		if re.RawResponse != nil && re.RawResponse.Request != nil {
			return fmt.Errorf("%s %s: %d %s", re.RawResponse.Request.Method, redactedURL(re.RawResponse.Request.URL.String()), re.StatusCode, re.ErrorCode)
		}
		return fmt.Errorf("%d %s", re.StatusCode, re.ErrorCode)
	}
	return err
}
