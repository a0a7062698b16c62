package host

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/backplane"
	"github.com/funcmcp/funcmcp/host/internal/ids"
	"github.com/funcmcp/funcmcp/host/internal/mcp"
)

// Paths of the legacy HTTP+SSE transport.
const (
	SSEPath     = MCPPath + "/sse"
	MessagePath = MCPPath + "/message"
)

// App settings (environment variables, else local.settings.json Values)
// read for the legacy SSE transport.
const (
	// SettingBackplane chooses how instances share legacy SSE traffic:
	// "memory" (the default: the instances of one process) or
	// "azurequeues" (Azure Storage Queues on the AzureWebJobsStorage
	// connection, for instances in several processes or machines).
	SettingBackplane = "FUNCMCP_BACKPLANE"
	// SettingStorage is the storage connection string of the app.
	SettingStorage = "AzureWebJobsStorage"
)

// Backplane kinds, the values of SettingBackplane.
const (
	BackplaneMemory      = "memory"
	BackplaneAzureQueues = "azurequeues"
)

// memoryHub joins the in-memory backplanes of the hosts of this process.
var memoryHub = backplane.NewHub()

// legacy is the host's legacy SSE transport and its backplane.
type legacy struct {
	instanceID string
	kind       string
	sse        *mcp.LegacySSE
	endpoint   http.Handler // the Streamable HTTP endpoint, for forwarded responses
	bp         backplane.Backplane
	stopOnce   sync.Once
}

// responsePrefix starts the ClientID of a backplane message carrying a
// client's response to a request of a call waiting on the receiving
// instance; the rest is the client's scope. Legacy SSE client ids are
// [a-z0-9]: they never start with it.
const responsePrefix = "response:"

// newInstanceID returns 16 random characters of [a-z2-7]: an instance id
// names a storage queue.
func newInstanceID() string { return ids.Random(ids.Base32Lower, 16) }

// newLegacy sets up the backplane the settings ask for. Nothing is
// contacted before start; attach completes the transport.
func (h *Host) newLegacy() (*legacy, error) {
	l := &legacy{instanceID: newInstanceID()}
	kind, from := h.cfg.Lookup(SettingBackplane)
	switch strings.ToLower(strings.TrimSpace(kind)) {
	case "", BackplaneMemory:
		l.kind = BackplaneMemory
		l.bp = backplane.NewMemory(memoryHub, l.instanceID)
	case BackplaneAzureQueues:
		l.kind = BackplaneAzureQueues
		conn, _ := h.cfg.Lookup(SettingStorage)
		q, err := backplane.NewQueue(l.instanceID, conn, &backplane.QueueOptions{ConnectionName: SettingStorage, Logger: h.log})
		if err != nil {
			return nil, err
		}
		l.bp = q
	default:
		return nil, fmt.Errorf("reading %s from %s: %q is not %q or %q", SettingBackplane, from, kind, BackplaneMemory, BackplaneAzureQueues)
	}
	return l, nil
}

// attach creates the legacy SSE transport over streamable, the endpoint
// made with endpoint.
func (l *legacy) attach(h *Host, endpoint *mcp.Options, streamable http.Handler) error {
	sse, err := mcp.NewLegacySSE(streamable, &mcp.LegacySSEOptions{
		InstanceID:   l.instanceID,
		Sealer:       h.secrets.Sealer,
		Forward:      forwarder{l.bp},
		MaxBodyBytes: endpoint.MaxBodyBytes,
		Logger:       h.log,
	})
	if err != nil {
		return err
	}
	l.sse, l.endpoint = sse, streamable
	return nil
}

// start makes the instance reachable through the backplane.
func (l *legacy) start(ctx context.Context) error {
	return l.bp.Start(ctx, l.deliver)
}

// deliver hands a message from another instance to its stream, or a
// client's response to the call waiting for it.
func (l *legacy) deliver(_ context.Context, m backplane.Message) {
	if scope, ok := strings.CutPrefix(m.ClientID, responsePrefix); ok {
		mcp.DeliverResponse(l.endpoint, scope, m.Body)
		return
	}
	l.sse.Deliver(m.ClientID, m.Body)
}

// forwardResponse sends a client's response to the instance where the
// call that asked waits.
func (l *legacy) forwardResponse(ctx context.Context, instanceID, scope string, body []byte) error {
	return forwarder{l.bp}.Forward(ctx, instanceID, responsePrefix+scope, body)
}

// stop ends the streams, then removes the instance from the backplane.
func (l *legacy) stop(ctx context.Context) error {
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
// backplane, each with a fresh id for duplicate suppression.
type forwarder struct{ bp backplane.Backplane }

func (f forwarder) Forward(ctx context.Context, instanceID, clientID string, message []byte) error {
	err := f.bp.Send(ctx, instanceID, backplane.Message{ID: ids.Random(ids.Base32, 26), ClientID: clientID, Body: message})
	if errors.Is(err, backplane.ErrUnknownInstance) {
		return fmt.Errorf("%w: %w", mcp.ErrNoInstance, err)
	}
	return err
}
