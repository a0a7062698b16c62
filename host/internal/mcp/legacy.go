package mcp

import (
	"net/http"

	"github.com/funcmcp/funcmcp/host/internal/caller"
	"github.com/funcmcp/funcmcp/host/internal/mcp/legacysse"
	"github.com/funcmcp/funcmcp/host/internal/notify"
)

// The legacy HTTP+SSE transport lives in package legacysse; these names
// keep the host's spelling of it.
type (
	// LegacySSE is the HTTP+SSE transport of MCP 2024-11-05
	// ([legacysse.Transport]).
	LegacySSE = legacysse.Transport
	// LegacySSEOptions configures [NewLegacySSE].
	LegacySSEOptions = legacysse.Options
	// StateSealer seals client-state tokens and opens them again.
	StateSealer = legacysse.StateSealer
	// Forwarder carries a client's message to the instance holding its
	// stream.
	Forwarder = legacysse.Forwarder
	// Delivery is what became of a message handed to [LegacySSE.Deliver].
	Delivery = legacysse.Delivery
)

// streamOrigin is the legacy SSE stream a message came on.
type streamOrigin = legacysse.Origin

// Deliveries, the errors of a [Forwarder] and the defaults of
// [LegacySSEOptions], as package legacysse names them.
const (
	Delivered               = legacysse.Delivered
	DeliveryFull            = legacysse.DeliveryFull
	DeliveryGone            = legacysse.DeliveryGone
	ClientStatePurpose      = legacysse.ClientStatePurpose
	DefaultKeepAlive        = legacysse.DefaultKeepAlive
	DefaultMaxStreams       = legacysse.DefaultMaxStreams
	DefaultStreamInbox      = legacysse.DefaultStreamInbox
	DefaultStreamInboxBytes = legacysse.DefaultStreamInboxBytes
	DefaultInboxBytes       = legacysse.DefaultInboxBytes
)

// Errors of a [Forwarder].
var (
	ErrNoInstance = legacysse.ErrNoInstance
	ErrStreamFull = legacysse.ErrStreamFull
)

// NewLegacySSE returns the legacy transport running messages through
// endpoint: each message reaches it with its stream's origin.
func NewLegacySSE(endpoint *Handler, opts *LegacySSEOptions) (*LegacySSE, error) {
	var e legacysse.Endpoint
	if endpoint != nil {
		e = legacyEndpoint{endpoint.h}
	}
	return legacysse.New(e, opts)
}

// legacyEndpoint is the handler as the legacy transport sees it
// ([legacysse.Endpoint]).
type legacyEndpoint struct{ h *handler }

func (e legacyEndpoint) Route(msg []byte) legacysse.Route { return routeOf(msg) }

func (e legacyEndpoint) Serve(w http.ResponseWriter, r *http.Request, origin *legacysse.Origin) {
	e.h.serve(w, r, origin)
}

func (e legacyEndpoint) Listen(who *caller.Caller, wake func()) (*notify.Listener, error) {
	if e.h.hub == nil {
		return nil, nil
	}
	// Streams are bounded (MaxStreams, the connection limit): a stream's
	// listener does not count against the listener limits, but the URIs
	// it follows count against its owner's and its address's bytes.
	return e.h.hub.Listen(notify.ListenerOptions{Owner: who.Owner(), Address: who.Address(), Uncounted: true, Wake: wake},
		e.h.listeners.Offer().Lists())
}

func (e legacyEndpoint) Change(c notify.Change) []byte { return renderChange(c, nil) }

// routeOf reads what the legacy transport needs of a message with the
// decoder every other path uses (decodeMessage), so that the transport and
// the handler never see two messages in the same bytes.
func routeOf(msg []byte) legacysse.Route {
	var m message
	code, _ := decodeMessage(msg, &m)
	rt := legacysse.Route{JSON: code != CodeParseError}
	switch {
	case code == 0 && m.Method == "" && (m.HasResult || m.HasError) && m.ID != nil:
		rt.Response = true
		return rt
	case m.ID == nil:
		rt.Cancel = code == 0 && m.Method == methodCancelled && m.ParamsProblem == ""
		return rt
	}
	// The id the handler echoes, refusal or not: a request sent again gets
	// no second answer.
	if id := validID(m.ID); id != nil {
		rt.ID = string(id)
	}
	return rt
}
