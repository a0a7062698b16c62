package instances

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/backplane"
	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/host/internal/dedup"
	"github.com/funcmcp/funcmcp/host/internal/ids"
	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/host/internal/telemetry"
)

// App settings (environment variables, else local.settings.json Values)
// read for the legacy SSE transport.
const (
	// SettingBackplane chooses how instances share legacy SSE traffic:
	// "memory" (the default: the instances of one process),
	// "azurequeues" (Azure Storage Queues on the AzureWebJobsStorage
	// connection) or "redis" (the FUNCMCP_REDIS connection), for
	// instances in several processes or machines.
	SettingBackplane = "FUNCMCP_BACKPLANE"
	// SettingStorage is the storage connection of the app: a connection
	// string, or identity-based settings AzureWebJobsStorage__accountName
	// (or __queueServiceUri and __blobServiceUri), __credential,
	// __clientId, __managedIdentityResourceId, __tenantId.
	SettingStorage = "AzureWebJobsStorage"
	// SettingRedis is the Redis connection of the redis backplane: a
	// connection string ("host:port,password=…,ssl=True" or a rediss://
	// URL), or FUNCMCP_REDIS__redisHostName, __principalId and
	// optionally __clientId for Microsoft Entra authentication.
	SettingRedis = "FUNCMCP_REDIS"
	// SettingHeartbeat is how often an instance tells the others it is
	// alive ("15s", or a time span "00:00:15"); default 15s for
	// azurequeues, 5s for redis. Messages for an instance silent for three
	// heartbeats get 503 (it may be paused); for one silent for six, 400
	// (it is dead).
	SettingHeartbeat = "FUNCMCP_BACKPLANE_HEARTBEAT"
)

// Backplane kinds, the values of SettingBackplane.
const (
	BackplaneMemory      = "memory"
	BackplaneAzureQueues = "azurequeues"
	BackplaneRedis       = "redis"
)

// memoryHub joins the in-memory backplanes of the hosts of this process.
var memoryHub = backplane.NewHub()

// Legacy is the host's legacy SSE transport and the backplane the
// settings choose: the messages of a legacy SSE stream on another instance
// are forwarded to it, and so are the clients' responses to a request of a
// call waiting on another instance; the changes listeners hear travel
// between instances over the same backplane (relay.go).
type Legacy struct {
	instanceID string
	kind       string
	sse        *mcp.LegacySSE
	endpoint   *mcp.Handler // the Streamable HTTP endpoint, for forwarded responses
	bp         backplane.Backplane
	relay      relay         // the changes of notify across instances, over bp
	sealer     *auth.Sealer  // seals the ids of requests to clients
	forwarded  *dedup.Window // the ids of responses forwarded already
	log        *slog.Logger
	tel        *telemetry.Telemetry // nil when off
	stopOnce   sync.Once
}

// ResponsePrefix starts the ClientID of a backplane message carrying a
// client's response to a request of a call waiting on the receiving
// instance; the rest is the client's scope. Legacy SSE client ids are
// [a-z0-9]: they never start with it.
const ResponsePrefix = "response:"

// newInstanceID returns 16 random characters of [a-z2-7]: an instance id
// names a storage queue.
func newInstanceID() string { return ids.Random(ids.Base32Lower, 16) }

// NewLegacy sets up the backplane the settings of cfg ask for, on the
// app's connections; sealer seals the ids of requests to clients; tel may
// be nil (telemetry off). Nothing is contacted before Start; Attach
// completes the transport.
func NewLegacy(cfg *config.Config, conns *Connections, sealer *auth.Sealer, log *slog.Logger, tel *telemetry.Telemetry) (*Legacy, error) {
	l := &Legacy{instanceID: newInstanceID(), sealer: sealer, log: log, tel: tel}
	l.init()
	bp, kind, err := newBackplane(cfg, conns, log, l.instanceID, l.onBroadcast)
	if err != nil {
		return nil, err
	}
	l.bp, l.kind = bp, kind
	if b, ok := bp.(backplane.Broadcaster); ok {
		l.relay.bp = b
	}
	return l, nil
}

// forwardedWindow is how many forwarded response ids an instance
// remembers, to refuse a second copy without a storage request.
const forwardedWindow = 8192

func (l *Legacy) init() { l.forwarded = dedup.NewWindow(forwardedWindow) }

// Attach creates the legacy SSE transport over streamable, the endpoint
// made with endpoint.
func (l *Legacy) Attach(endpoint *mcp.Options, streamable *mcp.Handler) error {
	sse, err := mcp.NewLegacySSE(streamable, &mcp.LegacySSEOptions{
		InstanceID:   l.instanceID,
		Sealer:       l.sealer,
		Forward:      forwarder{l},
		MaxBodyBytes: endpoint.MaxBodyBytes,
		Logger:       l.log,
	})
	if err != nil {
		return err
	}
	l.sse, l.endpoint = sse, streamable
	return nil
}

// newBackplane makes the backplane the settings of cfg name; what other
// instances broadcast goes to onBroadcast.
func newBackplane(cfg *config.Config, conns *Connections, log *slog.Logger, id string, onBroadcast func([]byte)) (backplane.Backplane, string, error) {
	kind, from := cfg.Lookup(SettingBackplane)
	beat, err := heartbeat(cfg)
	if err != nil {
		return nil, "", err
	}
	switch strings.ToLower(strings.TrimSpace(kind)) {
	case "", BackplaneMemory:
		m := backplane.NewMemory(memoryHub, id, backplane.HoldOptions{}, log)
		m.OnBroadcast = onBroadcast
		return m, BackplaneMemory, nil
	case BackplaneAzureQueues:
		st, err := conns.Storage()
		if err != nil {
			return nil, "", fmt.Errorf("creating the backplane: %w", err)
		}
		q, err := backplane.NewQueue(id, st, &backplane.QueueOptions{Heartbeat: beat, Logger: log, OnBroadcast: onBroadcast})
		if err != nil {
			return nil, "", err
		}
		return q, BackplaneAzureQueues, nil
	case BackplaneRedis:
		rc, err := conns.Redis()
		if err != nil {
			return nil, "", fmt.Errorf("creating the backplane: %w", err)
		}
		r, err := backplane.NewRedis(id, rc, &backplane.RedisOptions{Heartbeat: beat, Logger: log, OnBroadcast: onBroadcast})
		if err != nil {
			return nil, "", err
		}
		return r, BackplaneRedis, nil
	}
	return nil, "", fmt.Errorf("reading %s from %s: %q is not %q, %q or %q", SettingBackplane, from, kind, BackplaneMemory, BackplaneAzureQueues, BackplaneRedis)
}

// heartbeat reads SettingHeartbeat: 0 when not set.
func heartbeat(cfg *config.Config) (time.Duration, error) {
	v, from := cfg.Lookup(SettingHeartbeat)
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		if d, err = config.ParseTimeSpan(v); err != nil || d < 0 {
			return 0, fmt.Errorf("reading %s from %s: %q is not a duration like \"15s\" or \"00:00:15\"", SettingHeartbeat, from, v)
		}
	}
	if d < 100*time.Millisecond {
		return 0, fmt.Errorf("reading %s from %s: %q is shorter than 100ms", SettingHeartbeat, from, v)
	}
	return d, nil
}

// InstanceID is this instance's id on the backplane.
func (l *Legacy) InstanceID() string { return l.instanceID }

// Kind is the backplane's kind: BackplaneMemory, BackplaneAzureQueues or
// BackplaneRedis.
func (l *Legacy) Kind() string { return l.kind }

// SSE is the legacy SSE transport, once Attach made it.
func (l *Legacy) SSE() *mcp.LegacySSE { return l.sse }

// Start makes the instance reachable through the backplane.
func (l *Legacy) Start(ctx context.Context) error {
	return l.bp.Start(ctx, l.Deliver)
}

// Deliver is where every message another instance sends is dispatched.
// backplane.Outcome and mcp.Delivery name the same three outcomes; this is
// their one mapping: Delivered is Taken, DeliveryFull is Full,
// DeliveryGone is Gone (mcp cannot import backplane, and backplane need
// not know mcp).
//
// a client's response goes to the call waiting for it, anything else to
// its legacy SSE stream. A response nothing waits for can never be
// delivered: it is dropped (logged at debug) and its sender told.
func (l *Legacy) Deliver(ctx context.Context, m backplane.Message) backplane.Outcome {
	ctx, span := l.tel.BackplaneReceive(ctx, l.kind, l.instanceID, m.ID, m.Traceparent, m.Sent)
	out := l.dispatch(m, l.tel.Traceparent(ctx))
	span.Set(telemetry.AttrBackplaneOutcome, out.String())
	span.End("")
	return out
}

// dispatch hands a received message to what waits for it (see deliver);
// trace is the traceparent its request on the stream is to carry.
func (l *Legacy) dispatch(m backplane.Message, trace string) backplane.Outcome {
	if scope, ok := strings.CutPrefix(m.ClientID, ResponsePrefix); ok {
		if l.endpoint.DeliverResponse(scope, m.Body) {
			return backplane.Taken
		}
		l.log.Debug("host: dropping a forwarded client response nothing waits for", "id", m.ID)
		return backplane.Gone
	}
	switch l.sse.DeliverTraced(m.ClientID, m.Body, trace) {
	case mcp.Delivered:
		return backplane.Taken
	case mcp.DeliveryFull:
		return backplane.Full
	}
	l.log.Warn("host: a forwarded message is for a stream that is not here; its sender is told", "client", m.ClientID, "id", m.ID)
	return backplane.Gone
}

// requestIDPurpose binds a sealed request id to the instance that asks
// and the client asked.
func requestIDPurpose(instanceID, scope string) string {
	return "funcmcp-request-id|" + instanceID + "|" + scope
}

// noDeadlineTTL is how long the id of a request whose call has no deadline
// can be answered through another instance.
const noDeadlineTTL = 24 * time.Hour

// RequestID makes the id of a request a call on this instance sends the
// client of scope: the instance's id, "~" and a token sealed with the
// session key for that instance and client, which expires with the call's
// deadline. Another instance that receives the answer forwards it only
// when the token opens there: a made-up id costs no storage request.
func (l *Legacy) RequestID(scope string, deadline time.Time) string {
	ttl := noDeadlineTTL
	if !deadline.IsZero() {
		ttl = time.Until(deadline)
	}
	token, err := l.sealer.Seal(requestIDPurpose(l.instanceID, scope), nil, ttl)
	if err != nil { // no randomness: the answer can still reach this instance
		l.log.Warn("host: sealing a request id failed; an answer to it through another instance is refused", "error", err)
		return l.instanceID + "~" + ids.Random(ids.LowerAlnum, 20)
	}
	return l.instanceID + "~" + token
}

// ErrNotARequest refuses a response that answers no request of the
// instance it names.
var ErrNotARequest = errors.New("the response answers no request that instance sent this client, or was forwarded already")

// ForwardResponse sends a client's response to the instance where the
// call that asked waits (see CheckResponse). A response refused here is
// dropped with a debug line, as one nothing waits for: a made-up id costs
// neither a storage request nor a warning. A response the other instance
// has nobody waiting for is not an error: it was dropped there.
func (l *Legacy) ForwardResponse(ctx context.Context, instanceID, scope string, body []byte) error {
	id, err := l.CheckResponse(instanceID, scope, body)
	if err != nil {
		l.log.Debug("host: a client's response is not forwarded", "error", err)
		return nil
	}
	out, err := l.send(ctx, instanceID, backplane.Message{ID: ids.Random(ids.Base32, 26), ClientID: ResponsePrefix + scope, Body: body})
	switch {
	case err != nil:
		return fmt.Errorf("forwarding a response to instance %q: %w", instanceID, err)
	case out == backplane.Gone:
		l.log.Debug("host: the instance a client's response was forwarded to has nothing waiting for it", "instance", instanceID, "id", id)
	}
	return nil
}

// send sends m to instance to through the backplane; with telemetry on,
// in a PRODUCER span whose trace context, and the time of sending, the
// message carries to the receiver.
func (l *Legacy) send(ctx context.Context, to string, m backplane.Message) (backplane.Outcome, error) {
	ctx, tp, sent, span := l.tel.BackplaneSend(ctx, l.kind, to, m.ID)
	m.Traceparent, m.Sent = tp, sent
	out, err := l.bp.Send(ctx, to, m)
	if err != nil {
		span.End(telemetry.ErrorTypeBackplaneSend)
		return out, err
	}
	span.Set(telemetry.AttrBackplaneOutcome, out.String())
	span.End("")
	return out, nil
}

// CheckResponse returns the id of a response that may go to instanceID:
// its id is one that instance made for the client of scope (RequestID),
// the call's deadline has not passed, and it was not forwarded before.
func (l *Legacy) CheckResponse(instanceID, scope string, body []byte) (string, error) {
	var r struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &r)
	token, ok := strings.CutPrefix(r.ID, instanceID+"~")
	if !ok || !backplane.ValidInstanceID(instanceID) {
		return "", fmt.Errorf("a response for instance %q: %w", instanceID, ErrNotARequest)
	}
	if _, err := l.sealer.Open(requestIDPurpose(instanceID, scope), token); err != nil {
		return "", fmt.Errorf("a response for instance %q: %w (%w)", instanceID, ErrNotARequest, err)
	}
	if !l.forwarded.Add(r.ID) {
		return "", fmt.Errorf("a response for instance %q: %w", instanceID, ErrNotARequest)
	}
	return r.ID, nil
}

// Stop ends the streams, then removes the instance from the backplane.
func (l *Legacy) Stop(ctx context.Context) error {
	var err error
	l.stopOnce.Do(func() {
		l.sse.Close()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		err = l.bp.Stop(sctx)
	})
	return err
}

// forwarder sends messages for streams on other instances through the
// backplane, each with a fresh id for duplicate suppression, and turns
// their outcome into the answer of the POST.
type forwarder struct{ l *Legacy }

func (f forwarder) Forward(ctx context.Context, instanceID, clientID string, message []byte) error {
	out, err := f.l.send(ctx, instanceID, backplane.Message{ID: ids.Random(ids.Base32, 26), ClientID: clientID, Body: message})
	switch {
	case errors.Is(err, backplane.ErrUnknownInstance):
		return fmt.Errorf("%w: %w", mcp.ErrNoInstance, err)
	case err != nil:
		return err
	case out == backplane.Full:
		return fmt.Errorf("forwarding to instance %q: %w", instanceID, mcp.ErrStreamFull)
	case out == backplane.Gone:
		return fmt.Errorf("forwarding to instance %q: the stream is not there: %w", instanceID, mcp.ErrNoInstance)
	}
	return nil
}
