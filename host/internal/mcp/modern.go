package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// ModernVersion is MCP revision 2026-07-28, the first "modern" revision:
// stateless, every request carrying its protocol version, client info and
// capabilities in params._meta, no initialize and no session.
const ModernVersion = metadata.RevisionStateless

// ModernVersions are the modern revisions the handler speaks, newest first.
var ModernVersions = []string{ModernVersion}

// Error codes of MCP 2026-07-28, allocated from -32020 on.
const (
	// CodeHeaderMismatch: an HTTP header disagrees with the body, or a
	// required header is missing or malformed (HTTP 400).
	CodeHeaderMismatch = -32020
	// CodeMissingRequiredClientCapability: the request needs a client
	// capability its _meta does not declare (HTTP 400).
	CodeMissingRequiredClientCapability = metadata.CodeMissingRequiredClientCapability
	// CodeUnsupportedProtocolVersion: the request's revision is not served;
	// data lists the supported ones (HTTP 400).
	CodeUnsupportedProtocolVersion = -32022
)

// The reserved _meta keys of a modern request and result (see package
// wire, which reads the envelope).
const (
	MetaProtocolVersion    = wire.MetaProtocolVersion
	MetaClientInfo         = wire.MetaClientInfo
	MetaClientCapabilities = wire.MetaClientCapabilities
	MetaLogLevel           = wire.MetaLogLevel
	MetaServerInfo         = wire.MetaServerInfo
)

// RequestMeta is everything a modern (2026-07-28) request says about its
// client (see [wire.RequestMeta]). Tool calls see it in [CallRequest.Meta].
type RequestMeta = wire.RequestMeta

func readClaim(msg *message) wire.Claim                       { return wire.ReadClaim(msg) }
func singleHeader(hdr http.Header, key string) (string, bool) { return wire.SingleHeader(hdr, key) }
func paramString(params []byte, key string) string            { return wire.ParamString(params, key) }

// Headers a modern request must carry beside MCP-Protocol-Version.
const (
	headerMethod = "Mcp-Method"
	headerName   = "Mcp-Name"
)

// Cache scopes of a cacheable result (ttlMs, cacheScope).
const (
	CacheScopePrivate = "private"
	CacheScopePublic  = "public"
)

// IsModern reports whether version is a modern revision: one served
// statelessly from the request's _meta, with no initialize.
func IsModern(version string) bool { return metadata.IsStateless(version) }

// modernReplies are the parts of modern results encoded once at start.
type modernReplies struct {
	serverInfoMeta []byte // "io.modelcontextprotocol/serverInfo":{…}
	metaOnly       []byte // {"io.modelcontextprotocol/serverInfo":{…}}
	discover       []byte // the whole server/discover result
	listHead       []byte // the tools/list result up to the tools array
	callHead       string // what a tools/call result starts with after '{'
	ack            []byte // the empty result of tasks/update and tasks/cancel
	cache          string // "ttlMs":…,"cacheScope":…
}

func newModernReplies(o *Options, versions []string, caps string) *modernReplies {
	info, err := metadata.Marshal(o.ServerInfo)
	if err != nil {
		panic(fmt.Sprintf("encoding server info: %v", err)) // plain strings: cannot fail
	}
	serverInfoMeta := append([]byte(strconv.Quote(MetaServerInfo)+":"), info...)
	ttl := strconv.FormatInt(o.CacheTTL.Milliseconds(), 10)
	scope, _ := metadata.Marshal(o.CacheScope)
	cache := `"ttlMs":` + ttl + `,"cacheScope":` + string(scope)

	disc := struct {
		ResultType        string          `json:"resultType"`
		SupportedVersions []string        `json:"supportedVersions"`
		Capabilities      json.RawMessage `json:"capabilities"`
		Instructions      string          `json:"instructions,omitempty"`
	}{"complete", versions, json.RawMessage(caps), o.Instructions}
	d, err := metadata.Marshal(disc)
	if err != nil {
		panic(fmt.Sprintf("encoding the discover result: %v", err))
	}
	d = append(d[:len(d)-1], ","+cache+`,"_meta":{`...)
	d = append(append(d, serverInfoMeta...), "}}"...)

	head := []byte(`{"resultType":"complete",` + cache + `,"_meta":{`)
	head = append(append(head, serverInfoMeta...), `},"tools":`...)
	return &modernReplies{
		serverInfoMeta: serverInfoMeta,
		metaOnly:       append(append([]byte{'{'}, serverInfoMeta...), '}'),
		discover:       d,
		listHead:       head,
		callHead:       `"resultType":"complete",`,
		ack:            append(append([]byte(`{"resultType":"complete","_meta":{`), serverInfoMeta...), "}}"...),
		cache:          cache,
	}
}

// withServerInfo returns a result _meta with the server info added (the
// tool's own _meta keys kept, and its own server info key winning).
func (m *modernReplies) withServerInfo(meta json.RawMessage) json.RawMessage {
	trimmed := bytes.TrimSpace(meta)
	if jsonx.IsAbsent(trimmed) {
		return m.metaOnly // read-only, shared
	}
	if trimmed[0] != '{' || !json.Valid(trimmed) {
		return meta // AppendCheckedJSON reports what is wrong with it
	}
	it := members(trimmed)
	n := 0
	for key, _, ok := it.Next(); ok; key, _, ok = it.Next() {
		if keyIs(key, MetaServerInfo) {
			return meta
		}
		n++
	}
	out := append(append([]byte{'{'}, m.serverInfoMeta...), trimmed[1:]...)
	if n > 0 {
		out = slices.Insert(out, len(m.serverInfoMeta)+1, ',')
	}
	return out
}

// serveModern serves msg when it is a modern request and reports whether it
// did; a legacy message is left to the caller. A request is modern when its
// params._meta claims a protocol version (body first, the header is checked
// against it), or when its MCP-Protocol-Version header names a modern
// revision — then a missing envelope is an error, never a silent fall back.
func (h *handler) serveModern(req *request) bool {
	msg := &req.msg
	claim := readClaim(msg)
	headerVersion, hasHeader := singleHeader(req.r.Header, headerProtocolVersion)
	if !claim.Claimed {
		if msg.ID != nil && hasHeader && slices.Contains(h.modern, headerVersion) {
			if !isModernMethod(msg.Method, headerVersion) {
				h.refuse(req.w, http.StatusNotFound, validID(req.id), CodeMethodNotFound,
					"Method not found: '"+jsonx.SafeText(msg.Method)+"' is not available in protocol version "+headerVersion+".", nil)
				return true
			}
			h.refuse(req.w, http.StatusBadRequest, validID(req.id), CodeInvalidParams,
				"Invalid params: a "+headerVersion+" request needs _meta."+MetaProtocolVersion+
					" (and "+MetaClientCapabilities+"); send initialize for the earlier revisions.", nil)
			return true
		}
		return false
	}
	if msg.ID == nil {
		// 2026-07-28 defines no client notifications over HTTP; accept any.
		req.w.WriteHeader(http.StatusAccepted)
		return true
	}
	id := validID(req.id)
	if claim.Problem != "" {
		h.refuse(req.w, http.StatusBadRequest, id, CodeInvalidParams, claim.Problem, nil)
		return true
	}
	if hasHeader && headerVersion != claim.Version {
		h.refuse(req.w, http.StatusBadRequest, id, CodeHeaderMismatch, fmt.Sprintf(
			"Header mismatch: MCP-Protocol-Version header value '%s' does not match body value '%s'", headerVersion, claim.Version), nil)
		return true
	}
	if !slices.Contains(h.modern, claim.Version) {
		data := struct {
			Supported []string `json:"supported"`
			Requested string   `json:"requested"`
		}{h.discoverVersions, claim.Version}
		h.refuse(req.w, http.StatusBadRequest, id, CodeUnsupportedProtocolVersion, "Unsupported protocol version", data)
		return true
	}
	if problem := checkModernHeaders(req.r.Header, hasHeader, msg, req.method); problem != "" {
		h.refuse(req.w, http.StatusBadRequest, id, CodeHeaderMismatch, problem, nil)
		return true
	}
	if msg.Method == methodToolsCall {
		var declared []ParamHeader
		if t := req.Target(); t.Resolved != nil {
			declared = t.Resolved.ParamHeaders
		}
		if problem := checkParamHeaders(req.r.Header, msg.Params, declared); problem != "" {
			h.refuse(req.w, http.StatusBadRequest, id, CodeHeaderMismatch, problem, nil)
			return true
		}
	}
	req.version = claim.Version
	meta, problem := wire.DecodeRequestMeta(claim)
	if problem != "" {
		h.refuse(req.w, http.StatusBadRequest, id, CodeInvalidParams, problem, nil)
		return true
	}

	req.meta = meta
	req.scope = callScope(req, nil) // a legacy SSE stream's, else none
	if m := req.method; m == nil || !m.Has(meta.ProtocolVersion) || !m.serve(h, req) {
		// ping, initialize, logging/setLevel… are not part of 2026-07-28.
		h.refuse(req.w, http.StatusNotFound, id, CodeMethodNotFound,
			"Method not found: '"+jsonx.SafeText(msg.Method)+"' is not available in protocol version "+meta.ProtocolVersion+".", nil)
	}
	return true
}

// checkModernHeaders checks the standard request headers of a modern
// request against its body: MCP-Protocol-Version present (its value was
// compared already), Mcp-Method equal to the method, and Mcp-Name equal to
// the params member the method's table entry names (params.name of
// tools/call, params.uri of resources/read, …). It returns the -32020
// message, "" when all is well.
func checkModernHeaders(hdr http.Header, hasVersion bool, msg *message, m *methodInfo) string {
	if !hasVersion {
		return "Header mismatch: the MCP-Protocol-Version header is required."
	}
	method, ok := singleHeader(hdr, headerMethod)
	switch {
	case !ok:
		return "Header mismatch: the Mcp-Method header is required."
	case method != msg.Method:
		return fmt.Sprintf("Header mismatch: Mcp-Method header value '%s' does not match body value '%s'", method, msg.Method)
	}
	if m == nil || m.NameParam == "" {
		return ""
	}
	source := m.NameParam
	raw, ok := singleHeader(hdr, headerName)
	if !ok {
		return fmt.Sprintf("Header mismatch: the Mcp-Name header is required for %s.", msg.Method)
	}
	name, ok := wire.DecodeHeaderValue(raw)
	if !ok {
		return "Header mismatch: the Mcp-Name header value is not valid base64 in its =?base64?…?= form."
	}
	body := paramString(msg.Params, source)
	if name != body {
		return fmt.Sprintf("Header mismatch: Mcp-Name header value '%s' does not match body value '%s'", name, body)
	}
	return ""
}
