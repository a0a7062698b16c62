package wire

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/funcmcp/funcmcp/metadata"
)

// The envelope of a modern (2026-07-28) request: what params._meta says of
// the revision and the client, read once per request.

// The reserved _meta keys of a modern request and result.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientInfo         = "io.modelcontextprotocol/clientInfo"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
	MetaLogLevel           = "io.modelcontextprotocol/logLevel"
	MetaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// RequestMeta is everything a modern (2026-07-28) request says about its
// client, read from params._meta once per request. The server keeps none of
// it between requests. Tool calls see it in [CallRequest.Meta].
type RequestMeta struct {
	// ProtocolVersion is the request's revision (always a supported one).
	ProtocolVersion string
	// ClientInfo is io.modelcontextprotocol/clientInfo; nil when absent.
	ClientInfo *metadata.ClientInfo
	// ClientCapabilities is the io.modelcontextprotocol/clientCapabilities
	// object as sent (compact; at least {}).
	ClientCapabilities json.RawMessage
	// LogLevel is io.modelcontextprotocol/logLevel; "" means the client wants
	// no log notifications for this request.
	LogLevel string
	// ProgressToken is _meta.progressToken as sent (a JSON string or
	// number); nil when absent.
	ProgressToken json.RawMessage
}

// Claim is what a request's params say about its era.
type Claim struct {
	Claimed bool   // params._meta has io.modelcontextprotocol/protocolVersion
	Version string // its value when it is a string
	Meta    []byte // params._meta (valid JSON), nil when absent
	Problem string // a malformed envelope: the -32602 message
}

// ReadClaim looks for the modern envelope in a request's params._meta.
func ReadClaim(msg *Message) Claim {
	c := Claim{Meta: msg.Meta}
	if len(c.Meta) == 0 || c.Meta[0] != '{' {
		return Claim{}
	}
	it := Members(c.Meta)
	for key, val, ok := it.Next(); ok; key, val, ok = it.Next() {
		if KeyIs(key, MetaProtocolVersion) {
			c.Claimed = true
			s, isString := StringValue(val)
			if !isString || s == "" {
				c.Problem = "Invalid params: _meta." + MetaProtocolVersion + " must be a non-empty string."
			}
			c.Version = s
		}
	}
	return c
}

// SingleHeader returns the first value of a header (keys canonical).
func SingleHeader(hdr http.Header, key string) (string, bool) {
	vals := hdr[key]
	if len(vals) == 0 || vals[0] == "" {
		return "", false
	}
	return vals[0], true
}

// ParamString returns the string member key of params ("" when absent or
// not a string).
func ParamString(params []byte, key string) string {
	s, _ := StringValue(Member(params, key))
	return s
}

// DecodeClientInfo reads an Implementation object's name, title and version
// without reflection; ok is false when it is not an object or one of them
// is not a string.
func DecodeClientInfo(val []byte) (*metadata.ClientInfo, bool) {
	if val[0] != '{' {
		return nil, false
	}
	info := &metadata.ClientInfo{}
	it := Members(val)
	for key, v, more := it.Next(); more; key, v, more = it.Next() {
		var dst *string
		switch {
		case KeyIs(key, "name"):
			dst = &info.Name
		case KeyIs(key, "version"):
			dst = &info.Version
		case KeyIs(key, "title"):
			dst = &info.Title
		default:
			continue
		}
		s, ok := StringValue(v)
		if !ok && v[0] != 'n' { // null reads as "", as encoding/json does
			return nil, false
		}
		*dst = s
	}
	return info, true
}

// DecodeRequestMeta reads the rest of the envelope; the problem is a -32602
// message naming the offending key.
func DecodeRequestMeta(c Claim) (*RequestMeta, string) {
	m := &RequestMeta{ProtocolVersion: c.Version}
	it := Members(c.Meta)
	for key, val, ok := it.Next(); ok; key, val, ok = it.Next() {
		switch {
		case KeyIs(key, MetaClientCapabilities):
			if val[0] != '{' {
				return nil, "Invalid params: _meta." + MetaClientCapabilities + " must be an object."
			}
			m.ClientCapabilities = val
		case KeyIs(key, MetaClientInfo):
			info, ok := DecodeClientInfo(val)
			if !ok {
				return nil, "Invalid params: _meta." + MetaClientInfo + " must be an object with string name and version."
			}
			m.ClientInfo = info
		case KeyIs(key, MetaLogLevel):
			s, ok := StringValue(val)
			if !ok {
				return nil, "Invalid params: _meta." + MetaLogLevel + " must be a string."
			}
			m.LogLevel = s
		case KeyIs(key, "progressToken"):
			if c := val[0]; c != '"' && c != '-' && (c < '0' || c > '9') {
				return nil, "Invalid params: _meta.progressToken must be a string or a number."
			}
			m.ProgressToken = val
		}
	}
	if m.ClientCapabilities == nil {
		return nil, "Invalid params: _meta." + MetaClientCapabilities + " is required."
	}
	// The values alias the request body, which goes back to a pool.
	m.ClientCapabilities = bytes.Clone(m.ClientCapabilities)
	m.ProgressToken = bytes.Clone(m.ProgressToken)
	return m, ""
}
