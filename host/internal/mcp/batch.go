package mcp

import (
	"bytes"
	"errors"
	"net/http"
	"strconv"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/internal/jsonx"
)

// Bounds of a JSON-RPC batch (see [Options]).
const (
	// DefaultMaxBatchMessages bounds the messages of one batch.
	DefaultMaxBatchMessages = 100
	// DefaultMaxBatchReplyBytes bounds the bytes of the replies to one
	// batch.
	DefaultMaxBatchReplyBytes = 16 << 20
)

// serveBatch answers a JSON-RPC batch (body starts with '['). Batches
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
//
// A batch holds at most maxBatch messages (more: -32600, nothing run) and
// its replies at most maxBatchReply bytes: a reply that would pass the
// bound is replaced by a -32000 error, and the requests after it are not
// run and get that error too. So a batch of small requests for large
// replies (tools/list) costs the bound, not the requests times the reply.
func (h *handler) serveBatch(w http.ResponseWriter, r *http.Request, sse bool, body []byte, origin *streamOrigin) {
	elems := make([][]byte, 0, 8)
	s := jsonx.NewScanner(body)
	s.Space()
	count, valid := s.Array(func() bool {
		v, ok := s.Value()
		if len(elems) <= h.maxBatch {
			elems = append(elems, v)
		}
		return ok
	})
	// A batch refused whole passes the chain as one exchange with no
	// message (see chain.go).
	whole := &request{h: h, r: r, origin: origin}
	if !valid || !s.End() {
		h.refuseEarly(whole, w, &earlyAnswer{status: http.StatusBadRequest, code: CodeParseError, text: "Parse error"})
		return
	}
	held := wire.NewRecorder()
	_, version, ok := h.legacyState(&request{w: held, r: r, origin: origin})
	if !ok {
		h.refuseEarly(whole, w, &earlyAnswer{held: held})
		return
	}
	switch {
	case version != batchVersion:
		h.refuseEarly(whole, w, &earlyAnswer{status: http.StatusBadRequest, code: CodeInvalidRequest,
			text: "Invalid Request: JSON-RPC batches are accepted only in protocol version " + batchVersion + ", not in " + version + "."})
		return
	case count == 0:
		h.refuseEarly(whole, w, &earlyAnswer{status: http.StatusBadRequest, code: CodeInvalidRequest, text: "Invalid Request: an empty batch"})
		return
	case count > h.maxBatch:
		h.refuseEarly(whole, w, &earlyAnswer{status: http.StatusBadRequest, code: CodeInvalidRequest,
			text: "Invalid Request: a JSON-RPC batch may hold at most " + strconv.Itoa(h.maxBatch) + " messages; this one holds " + strconv.Itoa(count) + "."})
		return
	}

	out := getBuffer()
	defer putBuffer(out)
	out.WriteByte('[')
	rec := &batchRecorder{header: http.Header{}, out: out, limit: h.maxBatchReply}
	n := 0
	spent := false // the budget ran out: the rest is not run
	for _, elem := range elems {
		start := out.Len()
		if n > 0 {
			out.WriteByte(',')
		}
		var msg message
		code, _ := decodeMessage(elem, &msg) // serveMessage reports the problems
		rec.reset()
		switch {
		case spent:
			if !answered(code, &msg) {
				out.Truncate(start)
				continue
			}
			h.batchTooLarge(out, validID(msg.ID), false)
			n++
			continue
		case msg.Method == methodInitialize && msg.ID != nil:
			h.refuseEarly(&request{h: h, r: r, origin: origin, batch: true, msg: msg, method: lookupMethod(msg.Method)}, rec,
				&earlyAnswer{status: http.StatusBadRequest, id: validID(msg.ID), code: CodeInvalidRequest,
					text: "Invalid Request: initialize must not be part of a JSON-RPC batch"})
		case code == 0 && readClaim(&msg).Claimed:
			h.refuseEarly(&request{h: h, r: r, origin: origin, batch: true, msg: msg, method: lookupMethod(msg.Method)}, rec,
				&earlyAnswer{status: http.StatusBadRequest, id: validID(msg.ID), code: CodeInvalidRequest,
					text: "Invalid Request: " + ModernVersion + " requests cannot be batched"})
		default:
			h.serveMessage(rec, r, false, elem, origin, true)
		}
		if rec.over {
			spent = true
			out.Truncate(start)
			if n > 0 {
				out.WriteByte(',')
			}
			h.batchTooLarge(out, validID(msg.ID), true)
			n++
			continue
		}
		reply := bytes.TrimSpace(out.Bytes()[start:])
		if len(reply) == 0 || len(reply) == 1 && reply[0] == ',' {
			out.Truncate(start) // a notification or a response: nothing to answer
			continue
		}
		out.Truncate(start + len(bytes.TrimRight(out.Bytes()[start:], " \t\r\n")))
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

// answered reports whether serveMessage answers a message it decoded with
// code (a request, or a message it refuses) rather than with 202.
func answered(code int, m *message) bool {
	switch {
	case code != 0:
		return true
	case m.Method == "":
		return m.ID == nil || !m.HasResult && !m.HasError
	}
	return m.ID != nil
}

// batchTooLarge writes the error that takes the place of a reply past the
// batch's budget.
func (h *handler) batchTooLarge(out *bytes.Buffer, id []byte, ran bool) {
	text := "Batch reply too large: the replies to this batch would exceed " + strconv.Itoa(h.maxBatchReply) + " bytes; "
	if ran {
		text += "send this request on its own."
	} else {
		text += "this request was not run; send it on its own."
	}
	b, err := jsonrpc.AppendError(out.AvailableBuffer(), id, codeServerError, text, nil)
	if err != nil {
		h.log.Error("mcp: encoding a batch error failed", "error", err)
	}
	out.Write(b)
}

// errBatchBudget is what a batch element's writer returns past the budget.
var errBatchBudget = errors.New("the batch reply budget is spent")

// batchRecorder appends the reply to one element of a batch to the batch's
// reply, refusing what would pass its limit.
type batchRecorder struct {
	header http.Header
	out    *bytes.Buffer
	limit  int
	over   bool
}

func (b *batchRecorder) reset() {
	clear(b.header)
	b.over = false
}

func (b *batchRecorder) Header() http.Header { return b.header }
func (b *batchRecorder) WriteHeader(int)     {}
func (b *batchRecorder) Write(p []byte) (int, error) {
	if b.over || b.out.Len()+len(p) > b.limit {
		b.over = true
		return 0, errBatchBudget
	}
	return b.out.Write(p)
}
