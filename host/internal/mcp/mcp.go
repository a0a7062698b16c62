package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/caller"
	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/host/internal/notify"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/metadata"
)

// Implementation names and versions an MCP peer (serverInfo).
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// DefaultMaxBodyBytes is the body limit used when [Options] leaves it 0.
const DefaultMaxBodyBytes = wire.DefaultMaxBodyBytes

// DefaultSessionLifetime is the lifetime of a session token.
const DefaultSessionLifetime = 24 * time.Hour

// Options configures [NewHandler]. A nil *Options means defaults.
type Options struct {
	// ServerInfo is returned by initialize; empty fields take
	// metadata.DefaultServerName and metadata.DefaultServerVersion.
	ServerInfo Implementation
	// Instructions is returned by initialize when not empty.
	Instructions string
	// Logger receives failed tool calls and bad tool lists; nil discards.
	Logger *slog.Logger
	// MaxBodyBytes limits a request body; 0 means DefaultMaxBodyBytes (4 MiB).
	// Larger bodies are answered with 413.
	MaxBodyBytes int64
	// CacheTTL is the ttlMs of modern server/discover and tools/list results:
	// how long a client may reuse them. 0 (the default) means re-fetch.
	CacheTTL time.Duration
	// CacheScope is their cacheScope: CacheScopePrivate (the default) or
	// CacheScopePublic.
	CacheScope string
	// Sealer seals and opens the Mcp-Session-Id tokens. Hosts sharing its
	// key accept each other's sessions; nil means a random key of this
	// handler (tokens die with the process).
	Sealer *auth.Sealer
	// MaxBatchMessages bounds the messages of a JSON-RPC batch; 0 means
	// DefaultMaxBatchMessages (100). A larger batch is refused with -32600.
	MaxBatchMessages int
	// MaxBatchReplyBytes bounds the replies to a batch; 0 means
	// DefaultMaxBatchReplyBytes (16 MiB). A reply that would pass it, and
	// the requests after it, get a -32000 error instead.
	MaxBatchReplyBytes int
	// PageSize is how many entries a page of resources/list,
	// resources/templates/list and prompts/list holds; 0 means
	// DefaultPageSize.
	PageSize int
	// SessionLifetime is how long a session token is accepted after
	// initialize; 0 means DefaultSessionLifetime. An expired token gets 404,
	// which tells the client to initialize again.
	SessionLifetime time.Duration
	// InstanceID names this host instance in the ids of the requests its
	// calls send their clients, so that an answer landing on another
	// instance finds its way back; "" means a random id.
	InstanceID string
	// ForwardResponse carries a client's response to a request of a call
	// running on another instance (the one the request id names); the
	// receiving instance hands it to [Handler.DeliverResponse]. nil means there are
	// no other instances.
	ForwardResponse func(ctx context.Context, instanceID, scope string, body []byte) error
	// RequestID, when set, makes the id of a request a call sends the
	// client of scope, waiting until deadline (zero: no deadline); it must
	// start with InstanceID and "~". nil means InstanceID, "~" and 20
	// random characters.
	RequestID func(scope string, deadline time.Time) string
	// ResumeGrace is how long a call whose resumable stream nobody reads
	// goes on before it is cancelled, and how long an unread result is
	// kept for the client to resume; 0 means DefaultResumeGrace.
	ResumeGrace time.Duration
	// ResumeStreams bounds the resumable streams kept (running calls, and
	// unread results for ResumeGrace), per owner and in all; a call over
	// it gets a plain stream. ResumeBytes bounds the bytes of their events,
	// per owner and in all, besides MaxResumeBytes per stream. A bound
	// left 0 takes DefaultResumeStreams or DefaultResumeBytes.
	ResumeStreams owner.Limit
	ResumeBytes   owner.Limit
	// CheckArguments bounds the arguments of tools/call and prompts/get and
	// the context.arguments of completion/complete, given the object as the
	// client sent it, before anything decodes them; a *ProtocolError it
	// returns is the answer (any other error is -32602 with its text). nil
	// checks nothing here.
	CheckArguments func(raw json.RawMessage) error
	// UsedInputStates bounds the 2026-07-28 request states this handler
	// remembers as used, each until it expires (so that each opens once),
	// per owner and in all; a bound left 0 takes DefaultUsedInputStates.
	// Over it a retry with a state is refused with -32602.
	UsedInputStates owner.Limit
	// SpentStates, when set, records the request states that opened where
	// every instance sharing it sees them, so that a state opens once
	// across those instances; nil leaves each instance remembering its own
	// (UsedInputStates).
	SpentStates StateLedger
	// Tasks turns MCP tasks on for the tools whose [Server.TaskSupport]
	// support them (2026-07-28, the io.modelcontextprotocol/tasks
	// extension); nil leaves them off and every call synchronous.
	Tasks *TaskOptions
	// Notify is the hub of the changes clients listen for; nil turns
	// notifications off (no subscriptions/listen, no resources/subscribe,
	// no GET stream, and no listChanged or subscribe capability). With a
	// hub and tasks on, every task state change is published to it.
	Notify *notify.Hub
	// ListenKeepAlive is the interval of the keep-alive comments of an
	// idle listening stream; 0 means DefaultListenKeepAlive.
	ListenKeepAlive time.Duration
	// ListenWriteTimeout bounds one write to a listening stream (a client
	// that stops reading is dropped after it); 0 means
	// DefaultListenWriteTimeout.
	ListenWriteTimeout time.Duration
	// SubscribedSessions bounds the legacy sessions whose resource
	// subscriptions this handler keeps, per client and in all; a bound
	// left 0 takes DefaultSubscribedSessions.
	SubscribedSessions owner.Limit
	// SubscriptionBytes bounds the bytes of the legacy sessions' resource
	// subscriptions this handler keeps (each URI's length and a little,
	// each session a little more), per client (owner), per client address
	// and in all; a bound left 0 takes DefaultSubscriptionBytes.
	SubscriptionBytes owner.BudgetLimit
	// SubscriptionGrace is how long a legacy session's resource
	// subscriptions are kept while no GET stream of the session is open
	// here (before the first one, and after one ends); 0 means
	// DefaultSubscriptionGrace.
	SubscriptionGrace time.Duration
	// Middleware are the links of the chain every request and
	// notification passes (see [Exchange]), outermost first, inside the
	// request log.
	Middleware []Middleware
}

// Server is what the endpoint serves, given to [NewHandler]: the tools,
// and what the app has besides them. A nil func (or a nil Functions) means
// the app has no such thing. The funcs must be safe for concurrent use.
type Server struct {
	// ToolsList returns the JSON array of the MCP Tool objects a client of
	// revision version sees (output schemas shaped per revision,
	// SEP-2106). It is encoded once by the implementation, and the handler
	// never re-encodes it per request (it splices the bytes): the handler
	// checks each distinct slice once (by identity) and keeps it, so return
	// the same slice until the list changes, and never modify it. Required.
	ToolsList func(version string) json.RawMessage
	// CallTool runs one tools/call. A *ProtocolError becomes that JSON-RPC
	// error; any other error becomes -32603. The request and everything it
	// points to must be treated as read-only. Required.
	CallTool func(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error)
	// ParamHeaders returns the declared x-mcp-header arguments of the tool
	// called name (see [ParamHeader]; nil for none or an unknown tool; the
	// slice must not be modified); nil when no tool declares any. The
	// handler then checks, on every modern tools/call, that each declared
	// argument present in the body (and not null) comes with its header
	// holding the same value, decoded from =?base64?…?= when so sent: a
	// missing, malformed or different header is HTTP 400 with -32020,
	// before the tool runs.
	ParamHeaders func(name string) []ParamHeader
	// TaskSupport returns the task declaration of the tool called name, nil
	// when it runs synchronously only; nil when no tool runs as a task. It
	// is read only when [Options.Tasks] turns tasks on.
	TaskSupport func(name string) *metadata.TaskSupport
	// AdmitsTasks says that CallTool admits each call (takes its slot)
	// before running it and calls [CallTask.Admitted] (or
	// [Notifier.Admitted]) then: the record of a task is made only for a
	// call that was admitted, and a refused call leaves none. When false, a
	// task's record is made before its call runs.
	AdmitsTasks bool
	// Functions are the resources, templates, prompts and completions; nil
	// when the app has none (their methods answer method-not-found).
	Functions *Functions
	// Known returns the app's own name for what a request names: for
	// TargetTool and TargetPrompt the declared name of the tool or prompt
	// called name, for TargetResource the URI of the static resource name
	// is, else the URI template it matches; ok is false when the app serves
	// nothing by that name. It is what [Exchange.Target] reads, so that
	// telemetry labels spans and metrics with the app's names only, never a
	// client's text: it runs on every exchange that names something while a
	// link asks, so it must be cheap and must not keep name. nil: nothing is
	// known (every target is unknown).
	Known func(kind TargetKind, name string) (known string, ok bool)
	// Resolve finds what the app serves by what a request names: nil when
	// it serves nothing by that name. It runs once per exchange that names
	// something (see [Exchange.Target]); every later step (telemetry,
	// scopes, limits, the Mcp-Param-* check, tasks, [Server.CallTool])
	// reads what it found. nil: Known, ParamHeaders and TaskSupport are
	// asked instead.
	Resolve func(kind TargetKind, name string) *Resolved
}

// Resolved is what the app serves by a request's target, found once
// ([Server.Resolve]).
type Resolved struct {
	// Known is the app's own name for it (see [Server.Known]).
	Known string
	// What names it in a refusal: "tool 'x'", "resource template 'x'", …
	What string
	// RequiredScopes are the scopes a request for it needs beyond a valid
	// access token.
	RequiredScopes []string
	// Task is a tool's task declaration, nil when it runs synchronously
	// only.
	Task *metadata.TaskSupport
	// ParamHeaders are a tool's x-mcp-header arguments (see
	// [Server.ParamHeaders]); the slice must not be modified.
	ParamHeaders []ParamHeader
	// Entry is the app's own entry, for the app's funcs to read typed (the
	// host's catalog entry); the endpoint never reads it.
	Entry any
}

// resolve finds what the app serves by name: through Resolve, else
// through Known, ParamHeaders and TaskSupport (a Server built without
// Resolve); nil when nothing is known of it.
func (s *Server) resolve(kind TargetKind, name string) *Resolved {
	if s.Resolve != nil {
		return s.Resolve(kind, name)
	}
	var r Resolved
	found := false
	if s.Known != nil {
		r.Known, found = s.Known(kind, name)
	}
	if kind == TargetTool {
		if s.ParamHeaders != nil {
			r.ParamHeaders = s.ParamHeaders(name)
		}
		if s.TaskSupport != nil {
			r.Task = s.TaskSupport(name)
		}
		found = found || r.ParamHeaders != nil || r.Task != nil
	}
	if !found {
		return nil
	}
	return &r
}

// Handler is the Streamable HTTP endpoint of [NewHandler].
type Handler struct{ h *handler }

// ServeHTTP serves one HTTP request of the endpoint.
func (e *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { e.h.serve(w, r, nil) }

// StopTasks ends the tasks running on the endpoint (each ends failed: the
// host stopped), and waits until their records say so, at most until ctx
// ends.
func (e *Handler) StopTasks(ctx context.Context) {
	if e.h.tasks != nil {
		e.h.tasks.Stop(ctx)
	}
}

// CallRequest is one tools/call as the handler received it.
type CallRequest struct {
	Name            string
	Arguments       map[string]json.RawMessage // nil when absent
	RawArguments    json.RawMessage            // the arguments object as sent (the same bytes as Arguments' values), nil when absent
	ProtocolVersion string                     // negotiated/declared revision for this request
	SessionID       string                     // the Mcp-Session-Id header ("" if none; always for modern requests)
	ClientInfo      *metadata.ClientInfo       // from the session token or _meta, nil if unknown
	Meta            *RequestMeta               // the _meta of a modern (2026-07-28) request, nil for legacy ones
	Headers         http.Header                // the request headers
	Transport       string                     // metadata.TransportStreamableHTTP, or metadata.TransportSSE over legacy SSE (then SessionID is "")
	// Notify sends progress and log notifications to the client during the
	// call; nil when the client can receive none (see [Notifier]).
	Notify *Notifier
	// Task is the task side of a call that runs as a task or may become
	// one, whose steps CallTool drives (see [CallTask]); nil for a call
	// that cannot become a task.
	Task CallTask
	// Owner is whom the call's work counts for (its verified principal,
	// else its verified function key, else its client address, as the
	// endpoint worked it out once; a task run again keeps its first
	// run's).
	Owner owner.ID
	// Caller is who sent the call, as the edge and the links in front of
	// the endpoint verified it (its identity, for the worker's identity
	// headers); nil for a call the endpoint did not read (a task run
	// again).
	Caller *caller.Caller
	// Tool is what the app serves by Name, found once when the request
	// was read ([Server.Resolve]); nil for a call the endpoint did not
	// read (a task run again), or when nothing is served by that name.
	Tool *Resolved
	// Attempt is, for a task run again on another instance after its
	// instance stopped, its run (2 or more); 0 for every other call. The
	// caller's access token is not kept for a re-run: its identity and
	// scopes were checked when the task was made, and its identity
	// headers are in Headers.
	Attempt int
}

// ProtocolError is a JSON-RPC error. A CallTool error that is (or wraps) a
// *ProtocolError is answered with that code, message and data.
type ProtocolError = jsonrpc.Error

// JSON-RPC error codes.
const (
	CodeParseError     = jsonrpc.CodeParseError
	CodeInvalidRequest = jsonrpc.CodeInvalidRequest
	CodeMethodNotFound = jsonrpc.CodeMethodNotFound
	CodeInvalidParams  = jsonrpc.CodeInvalidParams
	CodeInternalError  = jsonrpc.CodeInternalError

	// codeServerError is the implementation-defined code the transport uses
	// for HTTP-level refusals (405, 406, 413, bad session or version header).
	codeServerError = jsonrpc.CodeServerError
)

// SupportedVersions are the legacy MCP revisions the handler speaks, the
// ones negotiated by initialize, oldest first. The modern ones are
// [ModernVersions].
var SupportedVersions = []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}

// LatestVersion is the revision initialize answers when the client asks for
// one it does not support: the latest legacy revision.
const LatestVersion = "2025-11-25"

// batchVersion is the only revision whose clients may send JSON-RPC batches:
// 2025-03-26 says servers MUST accept them, 2025-06-18 removed them.
const batchVersion = "2025-03-26"

// defaultVersion is assumed for a request without MCP-Protocol-Version
// header and without session token, as the 2025-06-18 transport says.
const defaultVersion = "2025-03-26"

// NewHandler returns the Streamable HTTP endpoint serving srv at the path
// it is mounted on. See the package documentation for the contract.
func NewHandler(srv Server, opts *Options) *Handler {
	return &Handler{h: newHandler(srv, opts)}
}

// checkSealer returns o.Sealer, or a random one when it is nil.
func checkSealer(o *Options) *auth.Sealer {
	if o.Sealer != nil {
		return o.Sealer
	}
	s, err := auth.NewRandomSealer()
	if err != nil {
		panic(fmt.Sprintf("creating the session token sealer: %v", err)) // crypto/rand never fails on supported systems
	}
	return s
}
