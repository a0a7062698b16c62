package clientreq

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/funcmcp/funcmcp/host/internal/ids"
	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/mcp/wire"
	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/internal/bufpool"
	"github.com/funcmcp/funcmcp/metadata"
)

// Resumable streams (MCP 2025-11-25, SEP-1699). The response stream of a
// tools/call of a session at 2025-11-25 or later starts with a priming
// event — an id and no data — and a retry interval, and every later event
// carries an id "<stream>_<n>". When the stream closes before the result
// (the client's connection dropped, or the tool asked to close it with
// [Notifier.CloseStream] so that the client polls), the call goes on and
// its events are kept; the client reconnects with GET and Last-Event-ID,
// gets the events after that id and then the rest as they come, the result
// last.
//
// The events are kept in this process only: a GET that lands on another
// instance (without sticky sessions) is refused with 400, and the client
// may call again. A call without a reader is cancelled after
// Options.ResumeGrace; a finished call whose result nobody read is kept
// that long too.
//
// What is kept is bounded. Each stream keeps at most MaxResumeEvents
// events and MaxResumeBytes bytes, the result included: the oldest go
// first (a client resuming from one of them gets what is left). The bytes
// kept are also bounded per owner (Exchange.Owner of the call's request) and in
// all (Options.ResumeBytes), and so is the number of streams kept
// (Options.ResumeStreams): a call over the stream bound gets a plain
// stream, which ends the call when its client leaves, as before
// 2025-11-25. An event that does not fit is written to the reader, if
// there is one, and not kept; when that event is the result, a client
// that resumes gets a JSON-RPC error for the call that says so.

// Resumable stream limits.
const (
	// DefaultResumeGrace is how long a call goes on without a reader, and
	// how long an unread result is kept, when Options.ResumeGrace is 0.
	DefaultResumeGrace = time.Minute
	// ResumeRetry is the retry interval the priming event asks clients to
	// wait before reconnecting.
	ResumeRetry = time.Second
	// MaxResumeEvents and MaxResumeBytes bound the events kept per stream,
	// the result included.
	MaxResumeEvents = 256
	MaxResumeBytes  = 1 << 20
	// primeFlushDelay: the priming event is flushed with the first event,
	// or after this delay when the call is still running.
	primeFlushDelay = 50 * time.Millisecond
)

// DefaultResumeStreams and DefaultResumeBytes bound the resumable streams
// kept, and the bytes of their events, per owner and in all, where
// Options.ResumeStreams and Options.ResumeBytes leave a bound 0.
var (
	DefaultResumeStreams = owner.Limit{PerOwner: 64, Global: 4096}
	DefaultResumeBytes   = owner.Limit{PerOwner: 16 << 20, Global: 256 << 20}
)

// ErrNotResumable: the call's stream cannot be closed for the client to
// resume it (it is not a resumable stream).
var ErrNotResumable = errors.New("the call's stream is not Stream")

// ErrReaderGone is the cause of a call cancelled because nobody read its
// stream within ResumeGrace.
var ErrReaderGone = errors.New("the client left and did not resume the stream")

// Store holds the resumable streams of this handler by id. Its
// counters (nil in a zero store: nothing counted) bound the streams kept
// and the bytes of their events.
type Store struct {
	mu      sync.Mutex
	m       map[string]*Stream
	streams *owner.Counter
	bytes   *owner.Counter
}

func NewStore(streams, bytes owner.Limit) Store {
	fill := func(l, d owner.Limit) owner.Limit {
		if l.PerOwner <= 0 {
			l.PerOwner = d.PerOwner
		}
		if l.Global <= 0 {
			l.Global = d.Global
		}
		return l
	}
	return Store{
		streams: owner.NewCounter("resumable streams kept", "", fill(streams, DefaultResumeStreams)),
		bytes:   owner.NewCounter("bytes of resumable streams kept", "", fill(bytes, DefaultResumeBytes)),
	}
}

// take counts n more of c for id; a nil counter counts nothing.
func take(c *owner.Counter, id owner.ID, n int64) (func(), error) {
	if c == nil {
		return func() {}, nil
	}
	return c.Take(id, n)
}

func (s *Store) add(r *Stream) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]*Stream{}
	}
	s.m[r.id] = r
}

func (s *Store) Get(id string) *Stream {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[id]
}

// remove forgets a stream and gives back what it held.
func (s *Store) remove(id string) {
	s.mu.Lock()
	r := s.m[id]
	delete(s.m, id)
	s.mu.Unlock()
	if r != nil {
		r.releaseAll()
	}
}

// Stream is one resumable response stream.
type Stream struct {
	id    string
	scope string
	store *Store
	grace time.Duration // see ResumeGrace
	// cancel ends the call's context (its parent outlives the POST).
	cancel context.CancelCauseFunc

	// owner is whom the stream is counted for; reqID is the call's
	// request id, for the error that replaces a result not kept.
	owner owner.ID
	reqID []byte
	// slot gives back the stream's place in the store's count.
	slot func()

	mu       sync.Mutex
	events   [][]byte // the events kept, oldest first, each with its id line
	holds    []func() // gives back the bytes of each event kept
	first    int      // number of events[0] (of the next event kept when there is none)
	next     int      // number of the next event
	size     int      // bytes of events
	lost     int      // number of the result when it was not kept, else 0
	left     bool     // the call was cancelled: its client left
	live     *Live
	done     bool          // the result was written
	finished chan struct{} // closed when done
	release  chan struct{} // closed when the tool asks to close the stream
	released bool
	orphan   *time.Timer // runs while nobody reads
	prime    *time.Timer // flushes the priming event if nothing else has
	primed   bool        // the priming event went out
	last     bool        // the next event is the result
}

// Live is the connection a resumable stream is written to now.
type Live struct {
	w    http.ResponseWriter
	rc   *http.ResponseController
	gone chan struct{} // closed when the stream is given to another reader or fails
	once sync.Once
}

func (l *Live) detach() { l.once.Do(func() { close(l.gone) }) }

func (r *Stream) eventID(n int) string { return string(r.appendEventID(nil, n)) }

// appendEventID appends the id of event n: "<stream id>_<n>", as
// ParseEventID reads it.
func (r *Stream) appendEventID(dst []byte, n int) []byte {
	dst = append(append(dst, r.id...), '_')
	return strconv.AppendInt(dst, int64(n), 10)
}

// flushPrime sends the priming event when nothing else has yet.
func (r *Stream) flushPrime() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.primed || r.live == nil {
		return
	}
	r.primed = true
	if r.live.rc.Flush() != nil {
		r.dropLive()
	}
}

// append keeps one event (an SSE event without id line), as far as the
// bounds allow, and writes it to the live reader, if any.
func (r *Stream) append(ev []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	b := events.Get(len("id: ") + len(r.id) + 1 + maxEventDigits + 1 + len(ev))
	b = r.appendEventID(append(b, "id: "...), r.next)
	b = append(b, '\n')
	b = append(b, ev...)
	r.next++
	kept := r.keep(b)
	if !kept && r.last {
		r.lost = r.next - 1
	}
	if r.live != nil {
		if r.last {
			// The result: the reader's request returns right after it,
			// which flushes it (in one response, with its length, when the
			// priming event was not flushed yet).
			if _, err := r.live.w.Write(b); err != nil {
				r.dropLive()
			}
		} else {
			r.primed = true
			if !r.write(r.live, b) {
				r.dropLive()
			}
		}
	}
	if !kept {
		events.Put(b) // written: a Write does not keep what it is given
	}
}

// events are the buffers of the events streams keep: a stream gives
// them back when it forgets them (every call's result is one).
var events = bufpool.Pool{Max: 64 << 10}

// keep adds ev, the event numbered r.next-1, to the events kept, dropping
// the oldest as the stream's bounds and its owner's and everyone's budgets
// ask. It reports false when ev does not fit even alone: it is not kept,
// and neither is anything before it. r.mu is held (or r is not shared yet).
func (r *Stream) keep(ev []byte) bool {
	n := len(ev)
	if n <= MaxResumeBytes {
		for len(r.events) > 0 && (len(r.events) >= MaxResumeEvents || r.size+n > MaxResumeBytes) {
			r.dropOldest()
		}
		for {
			hold, err := take(r.store.bytes, r.owner, int64(n))
			if err == nil {
				r.events = append(r.events, ev)
				r.holds = append(r.holds, hold)
				r.size += n
				return true
			}
			if len(r.events) == 0 {
				break
			}
			r.dropOldest()
		}
	}
	for len(r.events) > 0 {
		r.dropOldest()
	}
	r.first = r.next
	return false
}

// dropOldest forgets the oldest event kept. r.mu is held.
func (r *Stream) dropOldest() {
	r.size -= len(r.events[0])
	r.holds[0]()
	if r.first > 0 { // the priming event (0) is not a buffer of events
		events.Put(r.events[0])
	}
	r.events[0], r.holds[0] = nil, nil
	r.events, r.holds = r.events[1:], r.holds[1:]
	r.first++
}

// releaseAll gives back everything the stream holds: its events' bytes
// and its place in the store.
func (r *Stream) releaseAll() {
	r.mu.Lock()
	for len(r.events) > 0 {
		r.dropOldest()
	}
	r.mu.Unlock()
	if r.slot != nil {
		r.slot()
	}
}

// write writes p to l, bounded like a notification. r.mu is held.
func (r *Stream) write(l *Live, p []byte) bool {
	deadline := l.rc.SetWriteDeadline(time.Now().Add(wire.NotifyWriteTimeout)) == nil
	_, err := l.w.Write(p)
	if err == nil {
		err = l.rc.Flush()
	}
	if deadline {
		_ = l.rc.SetWriteDeadline(time.Time{})
	}
	return err == nil
}

// dropLive forgets the live reader; nobody reads until a resume. r.mu is
// held. A finished stream needs no timer: finish forgot it (its result was
// read) or armed one itself (it was not).
func (r *Stream) dropLive() {
	if r.live == nil {
		return
	}
	r.live.detach()
	r.live = nil
	if !r.done {
		r.startOrphan()
	}
}

// startOrphan arms the timer that ends the call (or forgets its unread
// result) when nobody resumes in time. r.mu is held.
func (r *Stream) startOrphan() {
	if r.orphan != nil {
		r.orphan.Stop()
	}
	r.orphan = time.AfterFunc(r.grace, func() {
		r.mu.Lock()
		idle := r.live == nil
		done := r.done
		r.mu.Unlock()
		if !idle {
			return
		}
		if done {
			r.store.remove(r.id)
			return
		}
		r.mu.Lock()
		r.left = true
		r.mu.Unlock()
		r.cancel(ErrReaderGone)
	})
}

// detachLive gives up l as the live reader (its request ended).
func (r *Stream) detachLive(l *Live) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live == l {
		r.dropLive()
	}
}

// finish marks the result written; a stream whose result was read is
// forgotten at once.
// A call cancelled because its client left is forgotten at once too: its
// client had the whole grace period to come back.
func (r *Stream) Finish() {
	r.mu.Lock()
	r.done = true
	close(r.finished)
	// The result went out (or is kept): a call shorter than the delay
	// leaves no timer behind to run, and to keep its stream, after it.
	if r.prime != nil {
		r.prime.Stop()
	}
	forget := r.live != nil || r.left
	if forget && r.orphan != nil {
		r.orphan.Stop()
	}
	if !forget {
		r.startOrphan() // the unread result is kept a while
	}
	r.mu.Unlock()
	if forget {
		r.store.remove(r.id)
	}
}

// closeStream ends the current reader's stream, as the tool asked; the
// call goes on.
func (r *Stream) CloseStream() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.released {
		r.released = true
		close(r.release)
	}
	if r.live != nil && !r.primed {
		r.primed = true
		_ = r.live.rc.Flush()
	}
	r.dropLive()
}

// serve waits on the request that reads r through l until the result is
// written, the stream is given to another reader or closed, or the
// reader leaves.
func (r *Stream) Serve(ctx context.Context, l *Live) {
	select {
	case <-r.finished:
	case <-l.gone:
	case <-ctx.Done():
	}
	r.detachLive(l)
}

// resume attaches a new reader: it replays the events after last. It
// reports false, and writes nothing, when last names an event the stream
// never gave.
func (r *Stream) Resume(w http.ResponseWriter, last int) (*Live, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if last < 0 || last >= r.next {
		return nil, false
	}
	if r.live != nil {
		r.live.detach() // the newest reader wins
	}
	if r.orphan != nil {
		r.orphan.Stop()
	}
	wire.SetFraming(w.Header(), true)
	w.WriteHeader(http.StatusOK)
	l := &Live{w: w, rc: http.NewResponseController(w), gone: make(chan struct{})}
	from := min(max(last+1-r.first, 0), len(r.events))
	replay := r.events[from:]
	if r.lost > last {
		replay = append(slices.Clip(replay), r.lostResult())
	}
	if len(replay) == 0 && !r.done {
		replay = [][]byte{nil} // the headers go out now: the reader waits for what comes
	}
	for _, ev := range replay {
		if !r.write(l, ev) {
			l.detach()
			r.live = nil
			r.startOrphan()
			return l, true
		}
	}
	if r.done {
		l.detach()
		r.live = nil
		go r.store.remove(r.id) // everything was read
		return l, true
	}
	r.live = l
	r.primed = true
	return l, true
}

// lostResult is the event that stands for a result not kept: a JSON-RPC
// error for the call. r.mu is held.
func (r *Stream) lostResult() []byte {
	var b bytes.Buffer
	b.WriteString("id: ")
	b.WriteString(r.eventID(r.lost))
	b.WriteByte('\n')
	wire.BeginEvent(&b, wire.EventMessage)
	b.Write(jsonrpc.AppendResponseStart(b.AvailableBuffer(), r.reqID))
	b.WriteString(`,"error":{"code":`)
	b.WriteString(strconv.Itoa(jsonrpc.CodeServerError))
	b.WriteString(`,"message":"The result of this call was too large to keep for resuming (a stream keeps at most `)
	b.WriteString(strconv.Itoa(MaxResumeBytes >> 10))
	b.WriteString(` KiB, within the budgets of its client and of the server); call again."}`)
	b.WriteByte('}')
	wire.EndEvent(&b)
	return b.Bytes()
}

// streamRandLen is the length of the random part of a stream id.
const streamRandLen = 16

// maxEventDigits bounds the digits of an event number: 18 fit an int64,
// and no stream comes near that many events.
const maxEventDigits = 18

// ParseEventID splits "<instance>~<16 of a-z0-9>_<n>", written exactly as
// the server writes ids: n in decimal, without sign or leading zero.
func ParseEventID(id string) (string, int, bool) {
	i := strings.LastIndexByte(id, '_')
	if i <= 0 {
		return "", 0, false
	}
	stream, num := id[:i], id[i+1:]
	j := strings.LastIndex(stream, RequestIDSeparator)
	if j < 0 || len(stream)-j-len(RequestIDSeparator) != streamRandLen {
		return "", 0, false
	}
	for _, c := range []byte(stream[j+len(RequestIDSeparator):]) {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return "", 0, false
		}
	}
	if num == "" || len(num) > maxEventDigits || (num[0] == '0' && len(num) > 1) {
		return "", 0, false
	}
	n := 0
	for _, c := range []byte(num) {
		if c < '0' || c > '9' {
			return "", 0, false
		}
		n = n*10 + int(c-'0')
	}
	return stream, n, true
}

// Writer is the ResponseWriter of a call with a resumable stream:
// each Write is one whole SSE event, kept and sent to the live reader.
type Writer struct {
	r   *Stream
	hdr http.Header
}

// NewWriter returns the ResponseWriter of the call whose stream is r.
func NewWriter(r *Stream) *Writer { return &Writer{r: r, hdr: http.Header{}} }

// Header returns the header, which nothing reads: the stream's went out
// when it opened.
func (rw *Writer) Header() http.Header { return rw.hdr }

// WriteHeader does nothing: the stream's status went out when it opened.
func (rw *Writer) WriteHeader(int) {}

// LastEvent marks the next Write as the call's result.
func (rw *Writer) LastEvent() {
	rw.r.mu.Lock()
	rw.r.last = true
	rw.r.mu.Unlock()
}

// Write keeps p, one whole SSE event, and sends it to the live reader.
func (rw *Writer) Write(p []byte) (int, error) { rw.r.append(p); return len(p), nil }

// FlushError and SetWriteDeadline let http.ResponseController work: every
// event is flushed, and bounded, as it is written.
func (rw *Writer) FlushError() error                { return nil }
func (rw *Writer) SetWriteDeadline(time.Time) error { return nil }

// RequestIDSeparator ends the instance part of the ids this instance makes
// (of requests to clients, and of resumable streams).
const RequestIDSeparator = "~"

// Open starts the resumable stream of a call of scope, counted for who,
// on w (headers and the priming event), and returns it and w as its first
// reader; nil when the store keeps as many streams as it may (for who, or
// in all): the call then gets a plain stream. instance names this instance
// in the stream's id; grace is how long the call goes on without a reader.
func (s *Store) Open(w http.ResponseWriter, instance, scope string, who owner.ID, grace time.Duration) (*Stream, *Live) {
	slot, err := take(s.streams, who, 1)
	if err != nil {
		return nil, nil
	}
	r := &Stream{
		id:       instance + RequestIDSeparator + ids.Random(ids.LowerAlnum, streamRandLen),
		scope:    scope,
		store:    s,
		grace:    grace,
		owner:    who,
		slot:     slot,
		finished: make(chan struct{}),
		release:  make(chan struct{}),
	}
	wire.SetFraming(w.Header(), true)
	w.WriteHeader(http.StatusOK)
	r.live = &Live{w: w, rc: http.NewResponseController(w), gone: make(chan struct{})}
	prime := []byte("id: " + r.eventID(0) + "\nretry: " + strconv.FormatInt(ResumeRetry.Milliseconds(), 10) + "\ndata: \n\n")
	r.next = 1
	r.keep(prime)
	_, _ = r.live.w.Write(prime) // buffered: flushed with the first event, or soon
	r.prime = time.AfterFunc(primeFlushDelay, r.flushPrime)
	s.add(r)
	return r, r.live
}

// Scope is the scope of the client whose call the stream is.
func (r *Stream) Scope() string { return r.scope }

// SetCall sets what ends the call's context and the call's request id (for
// the error that replaces a result not kept); set before the call runs.
func (r *Stream) SetCall(cancel context.CancelCauseFunc, reqID []byte) {
	r.cancel, r.reqID = cancel, reqID
}

// Finished is closed once the call's result was written.
func (r *Stream) Finished() <-chan struct{} { return r.finished }

// Held returns the bytes of the events the store keeps, and the streams.
func (s *Store) Held() (bytes, streams int64) {
	return total(s.bytes), total(s.streams)
}

func total(c *owner.Counter) int64 {
	if c == nil {
		return 0
	}
	return c.Total()
}

// Reading reports whether a reader is attached to the stream now.
func (r *Stream) Reading() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live != nil
}

// resumesFrom is the first revision whose clients resume streams.
const resumesFrom = "2025-11-25"

// Resumes reports whether a call of revision version gets a resumable
// stream, when its request allows one (a legacy call of a session, over
// Streamable HTTP, whose client accepts an event stream): from 2025-11-25
// to the last revision with sessions.
func Resumes(version string) bool { return version >= resumesFrom && !metadata.IsStateless(version) }

// ServeResume serves a GET with Last-Event-ID lastID from the client of
// scope: the rest of the resumable stream the id names, or 400 when no
// such stream of that client is kept here (grace is how long a stream is
// kept after its call, as the refusal tells).
func (s *Store) ServeResume(w http.ResponseWriter, r *http.Request, lastID, scope string, grace time.Duration) {
	streamID, n, ok := ParseEventID(lastID)
	var rs *Stream
	if ok {
		rs = s.Get(streamID)
	}
	var l *Live
	if rs != nil && rs.Scope() == scope {
		l, ok = rs.Resume(w, n)
	}
	if l == nil || !ok {
		// Without data, the refusal cannot fail.
		_ = jsonrpc.Refuse(w, http.StatusBadRequest, nil, jsonrpc.CodeServerError,
			"Bad Request: no stream to resume with this Last-Event-ID here (streams are kept on the instance that served the call, while it runs and "+
				grace.String()+" after); call again.", nil)
		return
	}
	rs.Serve(r.Context(), l)
}
