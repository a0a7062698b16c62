package mcp

import (
	"bytes"
	"encoding/json"
	"net/http"
)

// serveBatch answers a JSON-RPC batch (a JSON array, valid JSON). Batches
// belong to revision 2025-03-26 only: that revision says servers MUST accept
// them, 2025-06-18 removed them and 2026-07-28 has none. The revision is the
// request's MCP-Protocol-Version header, else its session token's, else
// 2025-03-26 (what the transport assumes without either).
//
// Each element is answered as if it had been posted alone, in order; the
// replies to its requests form one JSON array (one SSE event when the client
// prefers a stream). A batch of notifications and responses only gets 202.
// initialize and modern (_meta-enveloped) requests cannot be batched and get
// an -32600 reply in their place.
func (h *handler) serveBatch(w http.ResponseWriter, r *http.Request, sse bool, body []byte) {
	_, version, ok := h.legacyState(&request{w: w, r: r})
	if !ok {
		return
	}
	if version != batchVersion {
		h.refuse(w, http.StatusBadRequest, nil, CodeInvalidRequest,
			"Invalid Request: JSON-RPC batches are accepted only in protocol version "+batchVersion+", not in "+version+".", nil)
		return
	}
	var elems []json.RawMessage
	if err := json.Unmarshal(body, &elems); err != nil || len(elems) == 0 {
		h.refuse(w, http.StatusBadRequest, nil, CodeInvalidRequest, "Invalid Request: an empty batch", nil)
		return
	}

	out := getBuffer()
	defer putBuffer(out)
	out.WriteByte('[')
	n := 0
	for _, elem := range elems {
		rec := &batchRecorder{header: http.Header{}}
		var msg message
		_, _ = decodeMessage(elem, &msg) // serveMessage reports the problems
		switch {
		case msg.method == methodInitialize && msg.id != nil:
			h.refuse(rec, http.StatusBadRequest, validID(msg.id), CodeInvalidRequest,
				"Invalid Request: initialize must not be part of a JSON-RPC batch", nil)
		case readClaim(&msg).claimed:
			h.refuse(rec, http.StatusBadRequest, validID(msg.id), CodeInvalidRequest,
				"Invalid Request: "+ModernVersion+" requests cannot be batched", nil)
		default:
			h.serveMessage(rec, r, false, elem)
		}
		reply := bytes.TrimSpace(rec.body.Bytes())
		if len(reply) == 0 {
			continue // a notification or a response: nothing to answer
		}
		if n > 0 {
			out.WriteByte(',')
		}
		out.Write(reply)
		n++
	}
	if n == 0 {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	out.WriteByte(']')
	if !sse {
		h.send(w, http.StatusOK, false, out.Bytes())
		return
	}
	framed := getBuffer()
	defer putBuffer(framed)
	appendEvent(framed, eventMessage, out.Bytes())
	h.send(w, http.StatusOK, true, framed.Bytes())
}

// batchRecorder collects the reply to one element of a batch.
type batchRecorder struct {
	header http.Header
	body   bytes.Buffer
}

func (b *batchRecorder) Header() http.Header         { return b.header }
func (b *batchRecorder) WriteHeader(int)             {}
func (b *batchRecorder) Write(p []byte) (int, error) { return b.body.Write(p) }
