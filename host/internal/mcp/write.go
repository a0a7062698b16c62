package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"

	"github.com/funcmcp/funcmcp/metadata"
)

// maxPooled is the largest buffer kept for reuse.
const maxPooled = 64 << 10

// chunkingThreshold: below it net/http sets Content-Length by itself when
// the handler writes its whole body at once.
const chunkingThreshold = 2048

var bufferPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuffer() *bytes.Buffer { return bufferPool.Get().(*bytes.Buffer) }

func putBuffer(b *bytes.Buffer) {
	if b.Cap() > maxPooled {
		return
	}
	b.Reset()
	bufferPool.Put(b)
}

// beginReply writes the start of a response envelope, up to the id.
func beginReply(b *bytes.Buffer, sse bool, id []byte) {
	if sse {
		b.WriteString("event: message\ndata: ")
	}
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	if id == nil {
		b.WriteString("null")
	} else {
		b.Write(id)
	}
}

// endReply closes the envelope (and the SSE event).
func endReply(b *bytes.Buffer, sse bool) {
	b.WriteByte('}')
	if sse {
		b.WriteString("\n\n")
	}
}

// result answers a request with an already encoded result.
func (h *handler) result(req *request, result []byte) {
	buf := getBuffer()
	defer putBuffer(buf)
	beginReply(buf, req.sse, req.id)
	buf.WriteString(`,"result":`)
	buf.Write(result)
	endReply(buf, req.sse)
	h.send(req.w, http.StatusOK, req.sse, buf.Bytes())
}

// rpcError answers a request with a JSON-RPC error (HTTP 200).
func (h *handler) rpcError(req *request, code int, message string, data any) {
	buf := getBuffer()
	defer putBuffer(buf)
	beginReply(buf, req.sse, req.id)
	h.appendError(buf, code, message, data)
	endReply(buf, req.sse)
	h.send(req.w, http.StatusOK, req.sse, buf.Bytes())
}

// refuse is a transport-level refusal: an HTTP error status with a plain
// JSON error body, whatever the client accepts.
func (h *handler) refuse(w http.ResponseWriter, status int, id []byte, code int, message string, data any) {
	buf := getBuffer()
	defer putBuffer(buf)
	beginReply(buf, false, id)
	h.appendError(buf, code, message, data)
	endReply(buf, false)
	h.send(w, status, false, buf.Bytes())
}

func (h *handler) appendError(b *bytes.Buffer, code int, message string, data any) {
	b.WriteString(`,"error":{"code":`)
	b.Write(strconv.AppendInt(b.AvailableBuffer(), int64(code), 10))
	b.WriteString(`,"message":`)
	appendString(b, message)
	if data != nil {
		encoded, err := metadata.Marshal(data)
		if err != nil {
			h.log.Error("mcp: encoding error data failed", "code", code, "error", err)
		} else {
			b.WriteString(`,"data":`)
			b.Write(encoded)
		}
	}
	b.WriteByte('}')
}

func setFraming(hdr http.Header, sse bool) {
	if sse {
		hdr["Content-Type"] = sseContentType
		hdr["Cache-Control"] = noCache
		hdr["X-Accel-Buffering"] = noBuffering
		return
	}
	hdr["Content-Type"] = jsonContentType
}

func (h *handler) send(w http.ResponseWriter, status int, sse bool, body []byte) {
	hdr := w.Header()
	setFraming(hdr, sse)
	if len(body) >= chunkingThreshold {
		hdr.Set("Content-Length", strconv.Itoa(len(body)))
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// sendParts writes head, body and tail as one 200 response without joining
// them in memory.
func (h *handler) sendParts(w http.ResponseWriter, sse bool, head, body []byte, tail string) {
	hdr := w.Header()
	setFraming(hdr, sse)
	hdr.Set("Content-Length", strconv.Itoa(len(head)+len(body)+len(tail)))
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(head); err != nil {
		return
	}
	if _, err := w.Write(body); err != nil {
		return
	}
	_, _ = w.Write([]byte(tail))
}

// appendCallToolResult encodes r the way MCP wants it ("content" always an
// array, empty optional members left out), checking and compacting every
// raw member in one pass. head, when not empty, is written first inside the
// object (members with their trailing comma). On error b is left unusable.
func appendCallToolResult(b *bytes.Buffer, r *metadata.CallToolResult, head string) error {
	b.WriteByte('{')
	b.WriteString(head)
	b.WriteString(`"content":[`)
	for i, block := range r.Content {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := json.Compact(b, block); err != nil {
			return fmt.Errorf("encoding content block %d: %w", i, err)
		}
	}
	b.WriteByte(']')
	if !isAbsent(r.StructuredContent) {
		b.WriteString(`,"structuredContent":`)
		if err := json.Compact(b, r.StructuredContent); err != nil {
			return fmt.Errorf("encoding structuredContent: %w", err)
		}
	}
	if r.IsError {
		b.WriteString(`,"isError":true`)
	}
	if !isAbsent(r.Meta) {
		b.WriteString(`,"_meta":`)
		if err := json.Compact(b, r.Meta); err != nil {
			return fmt.Errorf("encoding _meta: %w", err)
		}
	}
	b.WriteByte('}')
	return nil
}

// isAbsent is true for an empty or null raw value.
func isAbsent(raw json.RawMessage) bool {
	return len(bytes.TrimSpace(raw)) == 0 || string(bytes.TrimSpace(raw)) == "null"
}

// appendString writes s as a JSON string the way encoding/json does, minus
// HTML escaping (see [metadata.AppendJSONString]).
func appendString(b *bytes.Buffer, s string) {
	b.Write(metadata.AppendJSONString(b.AvailableBuffer(), s))
}
