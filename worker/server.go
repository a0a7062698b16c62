package worker

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/internal/bufpool"
	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/internal/startgc"
	"github.com/funcmcp/funcmcp/metadata"
)

// Handler returns the custom-handler HTTP handler: GET / answers 200 (the
// host's readiness probe) and POST /{function} runs a tool, reads a
// resource, serves an MCP App view or gets a prompt. It builds the app
// once; when the configuration is broken, every request gets 500 with the
// problems (use [App.Build] first to see them).
func (a *App) Handler() http.Handler {
	return a.handler(a.prepare())
}

// prepare builds the app and reads its output settings, as the server
// needs them.
func (a *App) prepare() (*compiled, error) {
	c, err := a.build()
	if err != nil {
		return nil, err
	}
	return a.prepareBuilt(c)
}

// prepareBuilt is prepare for an app built already.
func (a *App) prepareBuilt(c *compiled) (*compiled, error) {
	var err error
	if c.output, err = a.outputSettings(); err != nil {
		return nil, err
	}
	if err := a.checkViewFiles(c); err != nil {
		return nil, err
	}
	return c, nil
}

// handler is Handler for an app already built.
func (a *App) handler(c *compiled, err error) http.Handler {
	r := chi.NewRouter()
	r.NotFound(func(w http.ResponseWriter, _ *http.Request) {
		writeJSONError(w, http.StatusNotFound, "not found")
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
		writeJSONError(w, http.StatusMethodNotAllowed, "method not allowed")
	})
	if err != nil {
		msg := "the app configuration is invalid: " + err.Error()
		r.HandleFunc("/*", func(w http.ResponseWriter, _ *http.Request) {
			writeJSONError(w, http.StatusInternalServerError, msg)
		})
		return r
	}
	s := &server{app: a, c: c}
	r.Get("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":"ready"}`)
	})
	r.Post("/{function}", s.invoke)
	if a.wrap != nil {
		return a.wrap(r)
	}
	return &direct{Router: r, s: s}
}

// direct is the handler of an app that nothing wraps: a host in the same
// process may also hand it tool calls with no encoding
// ([metadata.LocalTools]). A wrapped handler (the app's telemetry) offers
// none, so that every call goes through the wrap.
type direct struct {
	chi.Router
	s *server
}

// LocalTools returns the server's [metadata.LocalToolCaller].
func (d *direct) LocalTools() metadata.LocalToolCaller { return d.s }

type server struct {
	app *App
	c   *compiled
}

// writeReply answers with status and the whole body data, its length said:
// unsaid, an answer larger than net/http's 2 KiB buffer (get_weather's is
// 2.2 KiB) goes chunked, which the host then reads chunk by chunk into a
// slice that grows as it reads.
func writeReply(w http.ResponseWriter, status int, contentType string, data []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(status)
	_, _ = w.Write(data)
}

func writeJSONError(w http.ResponseWriter, status int, msg string) {
	writeReply(w, status, "application/json", jsonError(msg))
}

// jsonError is the body of an error answer: {"error":msg}.
func jsonError(msg string) []byte {
	data, _ := metadata.Marshal(map[string]string{"error": msg})
	return data
}

func (s *server) lookup(fn string) *tool {
	return s.c.byFunc[strings.ToLower(fn)]
}

func (s *server) invoke(w http.ResponseWriter, r *http.Request) {
	fn := chi.URLParam(r, "function")
	if s.serveKind(w, r, fn) { // resources, prompts, MCP App views, completions (kinds_server.go)
		return
	}
	t := s.lookup(fn)
	if t == nil {
		writeJSONError(w, http.StatusNotFound, fmt.Sprintf("no function %q", fn))
		return
	}
	req, ok := s.readInvocation(w, r)
	if !ok {
		return
	}
	ic, err := metadata.ToolContextFromRequest(req, metadata.TriggerBindingName)
	if err != nil {
		writeJSONError(w, http.StatusBadRequest, err.Error())
		return
	}
	// funchost lists the direct reply in Accept and gets the result as it
	// is, without the text copy, which it adds itself; everyone else (the
	// Functions host) gets today's reply, the result envelope as a string
	// holding strings of JSON.
	direct := metadata.AcceptsDirectResult(r.Header.Get("Accept"))
	res, chk, logs, fail := s.run(r.Context(), t, ic, r.Header, direct)
	if fail != nil {
		writeFailure(w, fail, logs)
		return
	}
	contentType := "application/json"
	var resp []byte
	if direct {
		contentType = metadata.MediaTypeDirectResult
		resp = appendDirectReply(replies.Get(replySize(logs, res)), logs, res, chk)
	} else {
		resp = appendInvocationResponse(replies.Get(2*replySize(logs, res)), logs, envelope(res, chk))
	}
	writeReply(w, http.StatusOK, contentType, resp)
	replies.Put(resp) // written: a ResponseWriter keeps nothing it was given
}

// replies are the buffers of the replies to tool calls, each used again
// once written.
var replies = bufpool.Pool{Max: 64 << 10}

// CallToolLocal runs a tool call in the host's process
// ([metadata.LocalToolCaller]): what invoke does with the request decoded
// already, its direct reply not encoded. A function that is no tool is
// answered 404, as invoke answers a tool call to a function it does not
// serve.
func (s *server) CallToolLocal(ctx context.Context, call *metadata.LocalToolCall) (*metadata.DirectReply, int, []byte) {
	t := s.lookup(call.Function)
	if t == nil {
		return nil, http.StatusNotFound, jsonError(fmt.Sprintf("no function %q", call.Function))
	}
	res, chk, logs, fail := s.run(ctx, t, call.Context, call.Header, true)
	if fail != nil {
		return nil, http.StatusInternalServerError, failureBody(fail, logs)
	}
	return &metadata.DirectReply{Logs: logs, Result: res, Checked: chk.digest, OutputIssue: chk.issue}, http.StatusOK, nil
}

// run makes the tool context of a call of t from its decoded invocation
// context and its request header, and runs it ([server.call]); logs are
// the call's log lines. hostCopies is true when the host shapes the result
// again and so adds its text copy (funchost, or serve in process).
func (s *server) run(ctx context.Context, t *tool, ic *metadata.ToolInvocationContext, h http.Header, hostCopies bool) (res *metadata.CallToolResult, chk outputCheck, logs []string, fail *metadata.FailureReply) {
	tc := &ToolContext{
		Name:         ic.Name,
		Arguments:    ic.Arguments,
		rawArgs:      ic.RawArguments,
		SessionID:    ic.SessionID,
		ClientInfo:   ic.ClientInfo,
		Transport:    ic.Transport,
		InvocationID: h.Get(metadata.HeaderInvocationID),
		FunctionName: t.function,
	}
	tc.notify = newNotifier(ctx, h)
	tc.ClientRequests = newClientRequests(tc.notify, h, s.app.clientTimeout)
	tc.ClientRequests.hooked(s.app, t.function, tc.InvocationID)
	s.app.logger.LogAttrs(ctx, slog.LevelDebug, "invocation",
		slog.String("function", t.function), slog.String("tool", t.name), slog.String("invocationId", tc.InvocationID))
	res, chk, fail = s.call(ctx, t, tc, hostCopies)
	return res, chk, tc.Logs(), fail
}

// call runs the tool and returns a result, with its output check
// ([metadata.ToolResult.Checked]) when it was validated: errors, bad
// arguments and panics become isError results, and so does a result that
// breaks the tool's output rules under strict validation. The one error
// that is no result is a handler's [CapabilityError]: the call fails, with
// the failure reply of a missing client capability; and a panic in a call
// that runs as a task fails it with -32603 (the task ends failed).
func (s *server) call(ctx context.Context, t *tool, tc *ToolContext, hostCopies bool) (res *metadata.CallToolResult, chk outputCheck, fail *metadata.FailureReply) {
	defer func() {
		if p := recover(); p != nil {
			msg := fmt.Sprintf("tool %s panicked: %v", t.name, p)
			fmt.Fprintf(s.app.stderr, "%s\n%s", msg, debug.Stack())
			res, chk, fail = metadata.ErrorResult(msg), outputCheck{}, nil
			if tc.InTask() {
				// A task tells a tool's error (completed, isError) from a
				// failure of the server (failed): a panic is the latter.
				res, fail = nil, &metadata.FailureReply{Error: msg, Code: metadata.CodeInternalError}
			}
		}
	}()
	if se := checkScopes("tool '"+t.name+"'", t.rules.Trigger.RequiredScopes, tc.Transport); se != nil {
		// Before the arguments are looked at: what the caller may not call
		// tells it nothing of its input.
		tc.Logf("%v", se)
		return metadata.ErrorResult(se.Error()), outputCheck{}, nil
	}
	if issue := t.rules.CheckInput(tc.rawArgs, s.c.output); issue != nil {
		msg := issue.LogMessage()
		tc.Logf("%s", msg)
		level := slog.LevelError
		if issue.Mode == ValidationWarn {
			level = slog.LevelWarn
		}
		s.app.logger.LogAttrs(ctx, level, msg, slog.String("function", t.function), slog.String("invocationId", tc.InvocationID))
		if issue.Mode == ValidationStrict {
			return metadata.ErrorResult(issue.Error()), outputCheck{}, nil
		}
	}
	inv := &Invocation{Kind: KindTool, Function: t.function, Name: t.name, InvocationID: tc.InvocationID, transport: tc.Transport}
	if tc.InTask() {
		inv.Kind = KindTask
	}
	var out *Result
	err := s.app.runHooks(ctx, inv, func(ctx context.Context) (err error) {
		out, err = t.invoke(ctx, tc, t)
		return err
	})
	if tc.inputRequired() {
		// The host answers the call with the requests it was sent.
		return metadata.ErrorResult(fmt.Sprintf("tool %s needs the MCP client's input: %v", t.name, ErrInputRequired)), outputCheck{}, nil
	}
	if err != nil {
		tc.Logf("tool %s failed: %v", t.name, err)
		if fail := capabilityFailure(err); fail != nil {
			return nil, outputCheck{}, fail
		}
		return metadata.ErrorResult(err.Error()), outputCheck{}, nil
	}
	ctr, err := callToolResult(out)
	if err != nil {
		msg := fmt.Sprintf("tool %s returned an invalid result: %v", t.name, err)
		tc.Logf("%s", msg)
		return metadata.ErrorResult(msg), outputCheck{}, nil
	}
	d := &binding.Decoded{Result: ctr}
	check := t.rules.ShapeResult
	if hostCopies {
		check = t.rules.CheckResult // the host adds the text copy
	}
	if issue := check(d, s.c.output); issue != nil {
		// The app's bug, answered with an isError result (strict) or
		// delivered as is (warn): the server is fine, a warning.
		chk.issue = issue.LogMessage()
		tc.Logf("%s", chk.issue)
		s.app.logger.LogAttrs(ctx, slog.LevelWarn, chk.issue,
			slog.String("function", t.function), slog.String("tool", t.name), slog.String("invocationId", tc.InvocationID))
	}
	chk.digest = d.Checked
	return d.Result, chk, nil
}

// outputCheck is what the output check of a tool's result found: the
// digest of a validated result ([metadata.ToolResult.Checked]) and the
// message of a result that broke the output rules
// ([metadata.ToolResult.OutputIssue]).
type outputCheck struct {
	digest, issue string
}

// startReleaseDelay is how long after it starts serving the worker ends the
// start's hold on the collector (the host's deferred compile waits as long).
const startReleaseDelay = 100 * time.Millisecond

// ListenAndServe builds the app and serves [App.Handler] on addr until ctx is
// done, then shuts down gracefully (bounded by Options.ShutdownTimeout). A
// configuration problem is returned before listening.
func (a *App) ListenAndServe(ctx context.Context, addr string) error {
	c, err := a.prepare()
	if err != nil {
		return err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", addr, err)
	}
	return a.serve(ctx, l, a.handler(c, nil))
}

// Serve is [App.ListenAndServe] on an existing listener, which it closes. A
// configuration problem is returned before serving (the listener is closed
// then too).
func (a *App) Serve(ctx context.Context, l net.Listener) error {
	c, err := a.prepare()
	if err != nil {
		_ = l.Close()
		return err
	}
	return a.serve(ctx, l, a.handler(c, nil))
}

func (a *App) serve(ctx context.Context, l net.Listener, h http.Handler) error {
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 30 * time.Second,
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(l) }()
	// The start is over a little after the first requests, which then run
	// with the collector still held off (internal/startgc).
	release := time.AfterFunc(startReleaseDelay, startgc.Release)
	defer release.Stop()
	select {
	case err := <-errc:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), a.shutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	if err != nil {
		return fmt.Errorf("shutting down: %w", err)
	}
	return nil
}

// readInvocation reads an invocation request body (at most the app's body
// limit), answering the request itself when it cannot. Only Data is read:
// the trigger metadata (mcptoolargs, sys, …) repeats what the invocation
// context holds, so it is checked but not decoded into maps. A body spelled
// as funchost and the Functions host spell it is read in one pass, its Data
// values left as slices of it; any other spelling is decoded by
// encoding/json, to the same result.
func (s *server) readInvocation(w http.ResponseWriter, r *http.Request) (*metadata.InvocationRequest, bool) {
	data, err := readBody(http.MaxBytesReader(w, r.Body, s.app.maxBody), r.ContentLength, s.app.maxBody)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			writeJSONError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the request body is larger than %d bytes", mbe.Limit))
			return nil, false
		}
		writeJSONError(w, http.StatusBadRequest, "reading the invocation request: "+err.Error())
		return nil, false
	}
	// The body was read for this request alone: the context holds it.
	if d, ok := scanInvocation(data); ok {
		return &metadata.InvocationRequest{Data: d, Owned: true}, true
	}
	var req struct {
		Data     map[string]json.RawMessage `json:"Data"`
		Metadata json.RawMessage            `json:"Metadata"`
	}
	if err := json.NewDecoder(bytes.NewReader(data)).Decode(&req); err != nil {
		writeJSONError(w, http.StatusBadRequest, "decoding the invocation request: "+err.Error())
		return nil, false
	}
	return &metadata.InvocationRequest{Data: req.Data, Owned: true}, true
}

// readBody reads body to its end into a buffer sized from its
// Content-Length (size, -1 when unknown), within max: an invocation is
// read in one allocation rather than grown from 512 bytes (one with a
// token's identity headers, ~1.7 KiB, grew twice).
func readBody(body io.Reader, size, max int64) ([]byte, error) {
	if size < 0 || size >= max {
		return io.ReadAll(body)
	}
	buf := make([]byte, 0, size+1) // +1: the read that finds the end
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // more than announced
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// scanInvocation reads {"Data":{…},"Metadata":…} with exactly these keys,
// each once, checking the whole text; ok is false for anything else.
func scanInvocation(data []byte) (map[string]json.RawMessage, bool) {
	sc := jsonx.NewScanner(data)
	sc.Space()
	if sc.Peek() != '{' {
		return nil, false
	}
	var (
		out                map[string]json.RawMessage
		sawData, sawOthers bool
	)
	_, ok := sc.Object(func(key []byte, escaped bool) bool {
		if escaped {
			return false
		}
		switch string(key) {
		case "Data":
			if sawData {
				return false
			}
			sawData = true
			if sc.Literal("null") {
				return true
			}
			if sc.Peek() != '{' {
				return false
			}
			out = map[string]json.RawMessage{}
			_, ok := sc.Object(func(k []byte, esc bool) bool {
				if esc {
					return false
				}
				v, ok := sc.Value()
				out[string(k)] = v
				return ok
			})
			return ok
		case "Metadata":
			if sawOthers {
				return false
			}
			sawOthers = true
			return sc.Skip()
		}
		return false
	})
	return out, ok && sc.End()
}
