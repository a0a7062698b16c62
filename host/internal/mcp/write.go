package mcp

import (
	"bytes"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/metadata"
)

// chunkingThreshold: below it net/http sets Content-Length by itself when
// the handler writes its whole body at once.
const chunkingThreshold = 2048

// beginReply writes the start of a response envelope (in an SSE event when
// sse), up to the id.
func beginReply(b *bytes.Buffer, sse bool, id []byte) {
	if sse {
		beginEvent(b, eventMessage)
	}
	b.Write(jsonrpc.AppendResponseStart(b.AvailableBuffer(), id))
}

// endReply closes the envelope (and the SSE event).
func endReply(b *bytes.Buffer, sse bool) {
	b.WriteByte('}')
	if sse {
		endEvent(b)
	}
}

// replies writes the answers of the endpoint: results, JSON-RPC errors and
// transport refusals, framed as the request asked. It knows nothing of
// methods or sessions; the handler embeds it, so h.result and the others
// read as they did.
type replies struct {
	log *slog.Logger // for error data that cannot be encoded
}

// result answers a request with an already encoded result.
func (h *replies) result(req *request, result []byte) {
	buf := getBuffer()
	defer putBuffer(buf)
	beginReply(buf, req.sse, req.id)
	buf.WriteString(`,"result":`)
	buf.Write(result)
	endReply(buf, req.sse)
	h.send(req.w, http.StatusOK, req.sse, buf.Bytes())
}

// rpcError answers a request with a JSON-RPC error (HTTP 200).
func (h *replies) rpcError(req *request, code int, message string, data any) {
	req.setOutcome("error " + strconv.Itoa(code))
	buf := getBuffer()
	defer putBuffer(buf)
	beginReply(buf, req.sse, req.id)
	h.appendError(buf, code, message, data)
	endReply(buf, req.sse)
	h.send(req.w, http.StatusOK, req.sse, buf.Bytes())
}

// refuse is a transport-level refusal: an HTTP error status with a plain
// JSON error body, whatever the client accepts (see jsonrpc.Refuse).
func (h *replies) refuse(w http.ResponseWriter, status int, id []byte, code int, message string, data any) {
	if err := jsonrpc.Refuse(w, status, id, code, message, data); err != nil {
		h.log.Error("mcp: encoding error data failed", "code", code, "error", err)
	}
}

func (h *replies) appendError(b *bytes.Buffer, code int, message string, data any) {
	member, err := jsonrpc.AppendErrorMember(b.AvailableBuffer(), code, message, data)
	b.Write(member)
	if err != nil {
		h.log.Error("mcp: encoding error data failed", "code", code, "error", err)
	}
}

func (h *replies) send(w http.ResponseWriter, status int, sse bool, body []byte) {
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
func (h *replies) sendParts(w http.ResponseWriter, sse bool, head, body []byte, tail string) {
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

// appendString writes s as a JSON string the way encoding/json does, minus
// HTML escaping (see [metadata.AppendJSONString]).
func appendString(b *bytes.Buffer, s string) {
	b.Write(metadata.AppendJSONString(b.AvailableBuffer(), s))
}
