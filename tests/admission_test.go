package tests

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// The admission tests drive a real funchost process with what arrives
// before the host can serve it (calls while the worker starts or restarts)
// and with more than one client may take (task slots, connections).

// callOutcome is what one call got: its reply, or why it got none, and how
// long it took (reported, never asserted).
type callOutcome struct {
	ex   exchange
	err  error
	took time.Duration
}

// callsAtOnce sends n tools/call requests of the hardapp's check tool at
// once, each on a connection of its own, and returns what each got.
func callsAtOnce(ctx context.Context, endpoint string, n int) []callOutcome {
	out := make([]callOutcome, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := time.Now()
			ex, err := sendOnce(ctx, endpoint, callJSON(i, "check", `{"city":"Oslo"}`, ""))
			out[i] = callOutcome{ex, err, time.Since(start)}
		}()
	}
	wg.Wait()
	return out
}

// sendOnce is send on a new connection that is closed afterwards.
func sendOnce(ctx context.Context, url, body string) (exchange, error) {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}}
	defer client.CloseIdleConnections()
	return sendWith(ctx, client, url, body, nil)
}

// checkAnswered asserts that every call got the check tool's result.
func checkAnswered(t *testing.T, outs []callOutcome) {
	t.Helper()
	took := make([]time.Duration, 0, len(outs))
	results := 0
	for i, o := range outs {
		if !assert.NoError(t, o.err, "call %d got no reply", i) {
			continue
		}
		took = append(took, o.took)
		if assert.Equal(t, http.StatusOK, o.ex.status, "call %d: %s", i, o.ex.body) &&
			assert.Contains(t, string(o.ex.body), `"structuredContent":{"checked":true}`, "call %d", i) {
			results++
		}
	}
	slices.Sort(took)
	if len(took) > 0 {
		t.Logf("%d of %d calls got the tool's result; reply latency min %v, median %v, max %v",
			results, len(outs), took[0], took[len(took)/2], took[len(took)-1])
	}
}

// freeLoopbackPort returns a port nothing listens on now.
func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return port
}

// TestHardeningCallsWhileTheWorkerStarts (issue 25, finding 16): a
// tools/call sent in the first milliseconds after `funchost start`, before
// the worker answered its first probe, was never dispatched: it hung until
// the client gave up. Now calls sent from the moment the port accepts wait
// for the worker and run as soon as it is ready.
func TestHardeningCallsWhileTheWorkerStarts(t *testing.T) {
	app := hardened(t)
	port := freeLoopbackPort(t)
	h, found := launchHost(t, app, nil, "--port", strconv.Itoa(port))
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(startTimeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			_ = c.Close()
			break
		}
		require.True(t, time.Now().Before(deadline), "funchost did not listen on %s within %v: %v", addr, startTimeout, err)
		select {
		case <-h.exited:
			t.Fatalf("funchost exited: %v\n%s", h.waitErr, h.console.String())
		default:
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	outs := callsAtOnce(ctx, "http://"+addr+endpointPath, 16)
	h.awaitEndpoint(t, found)
	checkAnswered(t, outs)
}

// TestHardeningCallsAfterAWorkerCrash (issue 25, finding 16): calls sent
// right after the worker died, while funchost notices and starts another,
// each get their answer from the new worker. A call the worker may have
// read before it died is not sent again (a tool call is not idempotent), so
// the calls are sent once the killed worker is gone.
func TestHardeningCallsAfterAWorkerCrash(t *testing.T) {
	h := startHost(t, hardened(t))
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	checkAnswered(t, callsAtOnce(ctx, h.endpoint, 4))
	for round := range 2 {
		pid := workerPid(t, h.cmd.Process.Pid)
		require.NoError(t, syscall.Kill(pid, syscall.SIGKILL), "round %d", round)
		// A call the dying worker may have read is not sent again (it may
		// have run): the calls go once the worker is gone, reaped (a
		// killed Go process shows as a zombie while its other threads,
		// and its sockets, are still being torn down).
		require.EventuallyWithT(t, func(c *assert.CollectT) {
			_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
			assert.ErrorIs(c, err, os.ErrNotExist)
		}, stopTimeout, time.Millisecond)
		outs := callsAtOnce(ctx, h.endpoint, 16)
		checkAnswered(t, outs)
		if t.Failed() {
			t.Logf("console:\n%s", h.console.String())
		}
		assert.NotEqual(t, pid, workerPid(t, h.cmd.Process.Pid), "round %d: a new worker serves", round)
	}
}

// workerPid finds the worker (the app's handler executable) among the
// descendants of the funchost process root, which the test started.
func workerPid(t *testing.T, root int) int {
	t.Helper()
	children := map[int][]int{}
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		s := string(data)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(fields[1]); err == nil {
			children[ppid] = append(children[ppid], pid)
		}
	}
	queue := slices.Clone(children[root])
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err == nil && filepath.Base(exe) == "handler" && alive(pid) {
			return pid
		}
		queue = append(queue, children[pid]...)
	}
	t.Fatalf("no worker process below funchost (pid %d)", root)
	return 0
}

// startTasks sends n tools/call requests of the hardapp's slow_task (ten
// minutes) as 2026-07-28 task calls of the client at loopback address from,
// each with a fresh Authorization header (the app asks for no tokens: a
// client is its address, whatever it sends), at most 32 at once, and
// returns each reply (or why there was none).
func startTasks(ctx context.Context, endpoint, from string, n int) ([]taskReply, []error) {
	replies, errs := make([]taskReply, n), make([]error, n)
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			replies[i], errs[i] = taskCall(ctx, endpoint, from, fmt.Sprintf("Bearer fresh-%d", i), "tools/call", "slow_task",
				map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": 600000}})
		}()
	}
	wg.Wait()
	return replies, errs
}

// taskCall sends one 2026-07-28 request of a client that negotiated tasks,
// from the loopback address from ("" for the default) with the
// Authorization header auth, from any goroutine.
func taskCall(ctx context.Context, endpoint, from, auth, method, name string, params map[string]any) (taskReply, error) {
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}},
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	if err != nil {
		return taskReply{}, err
	}
	headers := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method, "Mcp-Name": name, "Authorization": auth}
	ex, err := sendWith(ctx, clientFrom(from), endpoint, string(body), headers)
	if err != nil {
		return taskReply{}, err
	}
	var r taskReply
	if err := json.Unmarshal(ex.body, &r); err != nil {
		return taskReply{}, fmt.Errorf("%d %s: %w", ex.status, ex.body, err)
	}
	return r, nil
}

// taskCounts sorts what one owner's task calls came to: running, refused
// naming the limit (at creation, or as the task's failure), and anything
// else (described).
type taskCounts struct {
	running, refused int
	other            []string
}

// settleTasks reads every task the replies made and counts them, once the
// refused ones have failed.
func settleTasks(t *testing.T, endpoint, from, limit string, replies []taskReply, errs []error) taskCounts {
	t.Helper()
	var c taskCounts
	var ids []string
	for i, r := range replies {
		switch {
		case errs[i] != nil:
			c.other = append(c.other, errs[i].Error())
		case r.Error != nil && strings.Contains(r.Error.Message, limit):
			c.refused++
		case r.Error != nil:
			c.other = append(c.other, r.Error.Message)
		default:
			var id string
			if json.Unmarshal(r.Result["taskId"], &id) != nil || id == "" {
				c.other = append(c.other, fmt.Sprintf("no task: %v", r.Result))
				continue
			}
			ids = append(ids, id)
		}
	}
	tc := taskClient{endpoint: endpoint, from: from}
	for _, id := range ids {
		var r taskReply
		require.EventuallyWithT(t, func(ct *assert.CollectT) {
			r = tc.get(t, id)
			if assert.Nil(ct, r.Error) {
				assert.NotEqual(ct, `"submitted"`, string(r.Result["status"]))
			}
		}, 20*time.Second, 20*time.Millisecond)
		switch status := string(r.Result["status"]); {
		case status == `"working"`:
			c.running++
		case status == `"failed"` && strings.Contains(string(r.Result["error"]), limit):
			c.refused++
		default:
			c.other = append(c.other, fmt.Sprintf("%s %s", status, r.Result["error"]))
		}
	}
	return c
}

// TestHardeningTasksKeepCapacityForCalls (issue 25, finding 1): one client
// started 256 long tasks and every other client's calls got "Server busy"
// for ten minutes: task work took every slot of the one call limit. Now a
// client runs at most 16 tasks at once, all clients together at most 192
// (three quarters of the 256 calls), and the rest of the call slots stay
// for synchronous calls. (Issue 39, finding 5: a fresh Authorization header
// per call, which nothing checks here, once made each call another client,
// 192 running tasks in 1.4 s; the client is its address.)
func TestHardeningTasksKeepCapacityForCalls(t *testing.T) {
	h := startHost(t, hardened(t))
	ctx, cancel := context.WithTimeout(t.Context(), 2*clientTimeout)
	defer cancel()

	start := time.Now()
	replies, errs := startTasks(ctx, h.endpoint, "127.0.0.2", 256)
	t.Logf("one client: 256 task calls answered in %v", time.Since(start))
	one := settleTasks(t, h.endpoint, "127.0.0.2", "too many running tasks for this client", replies, errs)
	t.Logf("one client: %d tasks running, %d refused naming the per-client limit, other: %v", one.running, one.refused, one.other)
	assert.Equal(t, 16, one.running)
	assert.Equal(t, 240, one.refused)
	assert.Empty(t, one.other)
	checkAnswered(t, callsAtOnce(ctx, h.endpoint, 16))

	// Twelve more clients, sixteen tasks each: 208 in all, over the
	// server's 192.
	running, refused := one.running, 0
	var other []string
	for i := range 12 {
		from := fmt.Sprintf("127.0.0.%d", 3+i)
		replies, errs := startTasks(ctx, h.endpoint, from, 16)
		c := settleTasks(t, h.endpoint, from, "too many running tasks on this server", replies, errs)
		running, refused, other = running+c.running, refused+c.refused, append(other, c.other...)
	}
	t.Logf("thirteen clients: %d tasks running, %d refused naming the server's limit, other: %v", running, refused, other)
	assert.Equal(t, 192, running)
	assert.Equal(t, 16, refused)
	assert.Empty(t, other)
	checkAnswered(t, callsAtOnce(ctx, h.endpoint, 32))
	legacySSECall(t, ctx, h.endpoint)
}

// legacySSECall makes a tools/call of the check tool over the legacy SSE
// transport and checks its result.
func legacySSECall(t *testing.T, ctx context.Context, endpoint string) {
	t.Helper()
	st, err := testutil.OpenSSE(ctx, endpoint+"/sse", nil)
	require.NoError(t, err)
	defer st.Close()
	ex := mustSend(t, st.Endpoint, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}`, nil)
	require.Equal(t, http.StatusAccepted, ex.status)
	_, err = st.Next(clientTimeout)
	require.NoError(t, err)
	ex = mustSend(t, st.Endpoint, callJSON(1, "check", `{"city":"Oslo"}`, ""), nil)
	require.Equal(t, http.StatusAccepted, ex.status, "%s", ex.body)
	ev, err := st.Next(clientTimeout)
	require.NoError(t, err)
	assert.Contains(t, ev.Data, `"structuredContent":{"checked":true}`, "a legacy SSE call is answered")
}

// floodConn is a client connection kept open by a test.
type floodConn struct {
	c  net.Conn
	br *bufio.Reader
}

// get sends GET path on the connection and returns the status, or an
// error when the connection was closed.
func (f *floodConn) get(path string) (int, string, error) {
	if _, err := io.WriteString(f.c, "GET "+path+" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		return 0, "", err
	}
	resp, err := http.ReadResponse(f.br, nil)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// dialFrom opens a connection to base from the loopback address from,
// closed when the test ends.
func dialFrom(t *testing.T, base, from string) *floodConn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.DialContext(t.Context(), "tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(clientTimeout)))
	return &floodConn{c: c, br: bufio.NewReader(c)}
}

// idleFlood opens n keep-alive connections to base from the loopback
// address from, sends one request on each and keeps them open and idle. It
// returns them and how many requests got 200.
func idleFlood(t *testing.T, base, from string, n int) (conns []*floodConn, ok int) {
	t.Helper()
	for range n {
		f := dialFrom(t, base, from)
		if status, _, err := f.get("/admin/host/status"); err == nil && status == http.StatusOK {
			ok++
		}
		conns = append(conns, f)
	}
	return conns, ok
}

// stillOpen counts the connections that still answer a request.
func stillOpen(conns []*floodConn) int {
	n := 0
	for _, f := range conns {
		if status, _, err := f.get("/admin/host/status"); err == nil && status == http.StatusOK {
			n++
		}
	}
	return n
}

// statusFrom is GET /admin/host/status on a new connection from the
// loopback address from: the status, or the error.
func statusFrom(ctx context.Context, base, from string) (int, string, error) {
	tr := &http.Transport{DisableKeepAlives: true, Proxy: nil,
		DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}).DialContext}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/admin/host/status", nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), err
}

// TestHardeningIdleConnectionFlood (issue 25, finding 10): one client
// opened 1,024 keep-alive connections, one request each, and every other
// client got 503 for the 120 s idle timeout: the connection limit was
// global. Now one address holds at most 128 connections (a new one closes
// its longest idle one, or is refused when none is idle), and when idle
// keep-alive connections of many addresses fill the server, one of the
// address holding the most is closed to let a new client in.
func TestHardeningIdleConnectionFlood(t *testing.T) {
	h := startHost(t, hardened(t))
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()

	conns, ok := idleFlood(t, h.base, "127.0.0.2", 1024)
	status, body, err := statusFrom(ctx, h.base, "127.0.0.1")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status, "another client is served: %s", body)
	open := stillOpen(conns)
	t.Logf("one address, 1,024 idle connections: %d answered, %d still open", ok, open)
	assert.Equal(t, 128, open)

	// Seven more addresses fill the server's 1,024 with idle connections.
	for i := 3; i <= 9; i++ {
		more, _ := idleFlood(t, h.base, fmt.Sprintf("127.0.0.%d", i), 128)
		conns = append(conns, more...)
	}
	for i := range 8 {
		status, body, err := statusFrom(ctx, h.base, "127.0.0.1")
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, status, "request %d of another client: %s", i, body)
	}

	// An address whose 128 connections are all busy (legacy SSE streams)
	// is refused one more, saying which limit.
	for i := range 128 {
		f := dialFrom(t, h.base, "127.0.0.10")
		_, err := io.WriteString(f.c, "GET "+endpointPath+"/sse HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(f.br, nil)
		require.NoError(t, err, "stream %d", i)
		require.Equal(t, http.StatusOK, resp.StatusCode, "stream %d", i)
	}
	// The refusal is written as soon as the connection is accepted: it is
	// read before any request is sent.
	refused := dialFrom(t, h.base, "127.0.0.10")
	resp, err := http.ReadResponse(refused.br, nil)
	require.NoError(t, err)
	refusal, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.Contains(t, string(refusal), "too many open connections from this address (the limit is 128)")
	status, body, err = statusFrom(ctx, h.base, "127.0.0.1")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, status, "another client is still served: %s", body)
}
