package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/auth"
	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/metadata"
)

// Implementation names and versions an MCP peer (serverInfo).
type Implementation struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// DefaultMaxBodyBytes is the body limit used when [Options] leaves it 0.
const DefaultMaxBodyBytes = 4 << 20

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
	// receiving instance hands it to [DeliverResponse]. nil means there are
	// no other instances.
	ForwardResponse func(ctx context.Context, instanceID, scope string, body []byte) error
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
	// Tasks turns MCP tasks on for the tools of a [TaskTools] that
	// support them (2026-07-28, the io.modelcontextprotocol/tasks
	// extension); nil leaves them off and every call synchronous.
	Tasks *TaskOptions
}

// StopTasks ends the tasks running on endpoint, the handler of
// [NewHandler] (each ends failed: the host stopped), and waits until their
// records say so, at most until ctx ends.
func StopTasks(ctx context.Context, endpoint http.Handler) {
	if h, ok := endpoint.(*handler); ok && h.tasks != nil {
		h.tasks.stop(ctx)
	}
}

// RevisionTools is a [Tools] whose advertised list depends on the client's
// MCP revision (output schemas shaped per revision, SEP-2106). The handler
// calls ToolsListFor instead of ToolsList when a Tools implements it; the
// same rules about identity and immutability apply to each list it returns.
type RevisionTools interface {
	Tools
	ToolsListFor(version string) json.RawMessage
}

// Tools is what the endpoint serves. Implementations must be safe for
// concurrent use.
type Tools interface {
	// ToolsList returns the JSON array of MCP Tool objects; it is encoded once by the
	// implementation and the handler must not re-encode it per request (splice the bytes).
	// The handler validates each distinct slice once (by identity) and keeps it:
	// return the same slice until the list changes, and never modify it.
	ToolsList() json.RawMessage
	// CallTool runs one tools/call. A *ProtocolError becomes that JSON-RPC
	// error; any other error becomes -32603. The request and everything it
	// points to must be treated as read-only.
	CallTool(ctx context.Context, req *CallRequest) (*metadata.CallToolResult, error)
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

// NewHandler returns the Streamable HTTP endpoint serving tools at the path
// it is mounted on. See the package documentation for the contract.
func NewHandler(tools Tools, opts *Options) http.Handler {
	return newHandler(tools, opts)
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
