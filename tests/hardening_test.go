package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
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

// The hardening tests drive a real funchost process with what hostile
// clients and broken apps tried against it, one test per finding, and
// measure the host's memory (VmRSS and VmHWM of /proc/<pid>/status) around
// each attack. Memory bounds are generous; times are never asserted.

const hardHostJSON = `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"handler"}},` +
	`"extensions":{"mcp":{"system":{"webhookAuthorizationLevel":"Anonymous"}}}}`

var hardApp once

// hardened returns the folder of the built tests/hardapp. Its check tool's
// function.json says nothing of input validation (strict) while the app
// checks no arguments itself, as a worker in another language might not.
func hardened(t testing.TB) string {
	t.Helper()
	return hardApp.get(t, func() (string, error) {
		dir, err := buildApp("hardapp", modulePath+"/tests/hardapp", []byte(hardHostJSON))
		if err != nil {
			return "", err
		}
		file := filepath.Join(dir, "check", "function.json")
		data, err := os.ReadFile(file)
		if err != nil {
			return "", err
		}
		var doc map[string]any
		if err := json.Unmarshal(data, &doc); err != nil {
			return "", err
		}
		for _, b := range doc["bindings"].([]any) {
			delete(b.(map[string]any), "inputValidation")
		}
		data, err = json.Marshal(doc)
		if err != nil {
			return "", err
		}
		return dir, os.WriteFile(file, data, 0o644)
	})
}

// memory reads the resident set (VmRSS) and its peak (VmHWM) of a process,
// in bytes.
func memory(t *testing.T, pid int) (rss, peak int64) {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(data), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		require.NoError(t, err)
		if name == "VmRSS" {
			rss = kb << 10
		} else {
			peak = kb << 10
		}
	}
	return rss, peak
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// exchange is one HTTP exchange with the host.
type exchange struct {
	status int
	body   []byte
	header http.Header
}

// send posts body to url with headers (Content-Type and Accept set unless
// given) from any goroutine.
func send(ctx context.Context, url, body string, headers map[string]string) (exchange, error) {
	return sendWith(ctx, http.DefaultClient, url, body, headers)
}

// sendWith is send through client.
func sendWith(ctx context.Context, client *http.Client, url, body string, headers map[string]string) (exchange, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return exchange{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return exchange{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return exchange{}, err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		data = lastEventData(data)
	}
	return exchange{resp.StatusCode, data, resp.Header}, nil
}

// lastEventData is the data of the last event of an SSE body.
func lastEventData(body []byte) []byte {
	var last []byte
	for _, line := range bytes.Split(body, []byte("\n")) {
		if rest, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
			last = rest
		}
	}
	return last
}

func mustSend(t *testing.T, url, body string, headers map[string]string) exchange {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	ex, err := send(ctx, url, body, headers)
	require.NoError(t, err)
	return ex
}

// structured returns the structuredContent of a tools/call reply.
func structured(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var reply struct {
		Result struct {
			StructuredContent map[string]any `json:"structuredContent"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(body, &reply), "%s", body)
	require.NotNil(t, reply.Result.StructuredContent, "%s", body)
	return reply.Result.StructuredContent
}

func callJSON(id any, tool, args string, meta string) string {
	params := `{"name":"` + tool + `","arguments":` + args
	if meta != "" {
		params += `,"_meta":` + meta
	}
	return `{"jsonrpc":"2.0","id":` + string(mustMarshal(id)) + `,"method":"tools/call","params":` + params + `}}`
}

func mustMarshal(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return data
}

// modernMeta and modernHeaders make a 2026-07-28 request.
const modernMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`

func modernHeaders(tool string) map[string]string {
	return map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": tool}
}

// TestHardeningBatchAmplification (finding 1): a 4 MiB JSON-RPC batch of
// tools/list requests, three at once. It once made 730 MB of replies and
// took the host from 16 MB to 6.27 GB; now a batch holds at most 100
// messages and 16 MiB of replies.
func TestHardeningBatchAmplification(t *testing.T) {
	h := startHost(t, hardened(t))
	pid := h.cmd.Process.Pid
	before, _ := memory(t, pid)

	var batch strings.Builder
	batch.WriteByte('[')
	for i := 0; batch.Len() < 4<<20-100; i++ {
		if i > 0 {
			batch.WriteByte(',')
		}
		fmt.Fprintf(&batch, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i)
	}
	batch.WriteByte(']')
	headers := map[string]string{"MCP-Protocol-Version": "2025-03-26", "Accept": "application/json"}
	var wg sync.WaitGroup
	results := make(chan exchange, 3)
	errs := make(chan error, 3)
	for range 3 {
		wg.Go(func() {
			ex, err := send(t.Context(), h.endpoint, batch.String(), headers)
			if err != nil {
				errs <- err
				return
			}
			results <- ex
		})
	}
	wg.Wait()
	close(results)
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	for ex := range results {
		assert.Equal(t, http.StatusBadRequest, ex.status)
		assert.Contains(t, string(ex.body), "a JSON-RPC batch may hold at most 100 messages")
	}

	// A batch within the bound is answered, every request in order.
	var small []string
	for i := range 100 {
		small = append(small, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i))
	}
	ex := mustSend(t, h.endpoint, "["+strings.Join(small, ",")+"]", headers)
	require.Equal(t, http.StatusOK, ex.status, "%.300s", ex.body)
	var replies []json.RawMessage
	require.NoError(t, json.Unmarshal(ex.body, &replies))
	assert.Len(t, replies, 100)

	after, peak := memory(t, pid)
	t.Logf("funchost RSS: %s before, %s after three 4 MiB batches of tools/list and one of 100 (peak %s)", mib(before), mib(after), mib(peak))
	assert.Less(t, peak, int64(256<<20), "the host's peak memory stays flat")
}

// TestHardeningLegacySSESmuggling (finding 2): a tools/call carrying an
// extra "METHOD":"notifications/cancelled" ran at once on its POST,
// outside the stream; 260 of them pinned every call slot. Now the router
// reads messages as the handler does: each is refused -32600 on the stream,
// nothing runs, and other clients' calls go on.
func TestHardeningLegacySSESmuggling(t *testing.T) {
	h := startHost(t, hardened(t))
	ctx, cancel := context.WithTimeout(t.Context(), 2*clientTimeout)
	defer cancel()
	st, err := testutil.OpenSSE(ctx, h.endpoint+"/sse", nil)
	require.NoError(t, err)
	defer st.Close()
	next := func() map[string]any {
		t.Helper()
		ev, err := st.Next(clientTimeout)
		require.NoError(t, err)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(ev.Data), &m), ev.Data)
		return m
	}
	ex := mustSend(t, st.Endpoint, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}`, nil)
	require.Equal(t, http.StatusAccepted, ex.status)
	next()

	const n = 260
	for i := range n {
		body := `{"jsonrpc":"2.0","id":` + strconv.Itoa(i+1) + `,"method":"tools/call","METHOD":"notifications/cancelled",` +
			`"params":{"name":"slow","arguments":{"ms":600000},"requestId":` + strconv.Itoa(i+1) + `}}`
		ex := mustSend(t, st.Endpoint, body, nil)
		require.Equal(t, http.StatusAccepted, ex.status, "%s", ex.body)
	}
	for range n {
		reply := next()
		assert.Nil(t, reply["id"])
		assert.Equal(t, `Invalid Request: the members "method" and "METHOD" differ only in case.`, reply["error"].(map[string]any)["message"])
	}
	ex = mustSend(t, st.Endpoint, `{"jsonrpc":"2.0","id":10,"ID":"x","method":"ping"}`, nil)
	require.Equal(t, http.StatusAccepted, ex.status)
	assert.Equal(t, `Invalid Request: the members "id" and "ID" differ only in case.`, next()["error"].(map[string]any)["message"])

	// No call slot is held: another client's call runs, and the stream
	// answers its next request.
	ex = mustSend(t, h.endpoint, callJSON(1, "slow", `{"ms":1}`, ""), nil)
	require.Equal(t, http.StatusOK, ex.status, "%s", ex.body)
	assert.Equal(t, "finished", structured(t, ex.body)["outcome"])
	ex = mustSend(t, st.Endpoint, `{"jsonrpc":"2.0","id":1000,"method":"ping"}`, nil)
	require.Equal(t, http.StatusAccepted, ex.status)
	assert.EqualValues(t, 1000, next()["id"])
	assert.NotContains(t, h.console.String(), "Executed 'Functions.slow' (Cancelled)")
}

// TestHardeningCancellationScope (finding 3): notifications/cancelled from
// one client ended another's call of the same id when neither had a
// session (2026-07-28 calls, sessionless legacy calls). A call now belongs
// to a scope only its client knows, and a stranger's cancellation reaches
// nothing.
func TestHardeningCancellationScope(t *testing.T) {
	h := startHost(t, hardened(t))
	cancelOne := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"reason":"not mine"}}`
	session := func() string {
		ex := mustSend(t, h.endpoint, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`, nil)
		require.Equal(t, http.StatusOK, ex.status)
		return ex.header.Get("Mcp-Session-Id")
	}
	attacker := session()
	// spam runs the victim's call of id 1 while the attacker keeps sending
	// notifications/cancelled for id 1 (without a session, and from the
	// canceller's session), and returns the call's outcome.
	spam := func(body string, headers map[string]string, canceller map[string]string) string {
		t.Helper()
		done := make(chan exchange, 1)
		failed := make(chan error, 1)
		go func() {
			ex, err := send(t.Context(), h.endpoint, body, headers)
			if err != nil {
				failed <- err
				return
			}
			done <- ex
		}()
		deadline := time.After(clientTimeout)
		for {
			select {
			case ex := <-done:
				require.Equal(t, http.StatusOK, ex.status, "%s", ex.body)
				var reply struct {
					Result struct {
						StructuredContent map[string]any `json:"structuredContent"`
					} `json:"result"`
				}
				require.NoError(t, json.Unmarshal(ex.body, &reply), "%s", ex.body)
				if outcome, ok := reply.Result.StructuredContent["outcome"].(string); ok {
					return outcome
				}
				return string(ex.body)
			case err := <-failed:
				t.Fatal(err)
			case <-deadline:
				t.Fatal("the call did not return")
			default:
			}
			for _, hdr := range []map[string]string{nil, canceller} {
				ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
				_, err := send(ctx, h.endpoint, cancelOne, hdr)
				cancel()
				require.NoError(t, err)
			}
		}
	}
	attackerHeaders := map[string]string{"Mcp-Session-Id": attacker, "MCP-Protocol-Version": "2025-06-18"}
	assert.Equal(t, "finished", spam(callJSON(1, "slow", `{"ms":1500}`, modernMeta), modernHeaders("slow"), attackerHeaders),
		"a 2026-07-28 call is no stranger's to cancel")
	assert.Equal(t, "finished", spam(callJSON(1, "slow", `{"ms":1500}`, ""), nil, attackerHeaders),
		"a sessionless legacy call is no stranger's to cancel")
	victim := map[string]string{"Mcp-Session-Id": session(), "MCP-Protocol-Version": "2025-06-18"}
	assert.Equal(t, "finished", spam(callJSON(1, "slow", `{"ms":1500}`, ""), victim, attackerHeaders),
		"a session's call is no other session's to cancel")
	assert.NotEqual(t, "finished", spam(callJSON(1, "slow", `{"ms":600000}`, ""), victim, victim),
		"its own session cancels it")
}

// TestHardeningLegacySSEInbox (finding 4): the messages waiting for a
// legacy SSE stream were bounded in count only: 255 messages of 4 MiB per
// stream were accepted, and two streams took the host to 3.7 GB. The inbox
// is now bounded in bytes, per stream and per host.
func TestHardeningLegacySSEInbox(t *testing.T) {
	h := startHost(t, hardened(t))
	pid := h.cmd.Process.Pid
	before, _ := memory(t, pid)
	ctx, cancel := context.WithTimeout(t.Context(), 5*clientTimeout)
	defer cancel()
	pad := strings.Repeat("x", 4<<20-200)
	accepted := 0
	for s := range 2 {
		st, err := testutil.OpenSSE(ctx, h.endpoint+"/sse", nil)
		require.NoError(t, err)
		defer st.Close()
		// The stream is busy with a long call: what follows waits.
		ex := mustSend(t, st.Endpoint, callJSON(1, "slow", `{"ms":600000}`, ""), nil)
		require.Equal(t, http.StatusAccepted, ex.status)
		for i := range 255 {
			ex := mustSend(t, st.Endpoint, `{"jsonrpc":"2.0","id":`+strconv.Itoa(100+i)+`,"method":"ping","params":{"pad":"`+pad+`"}}`, nil)
			if ex.status == http.StatusServiceUnavailable {
				assert.Contains(t, string(ex.body), "too many bytes waiting", "stream %d", s)
				break
			}
			require.Equal(t, http.StatusAccepted, ex.status, "%s", ex.body)
			accepted++
		}
	}
	after, peak := memory(t, pid)
	t.Logf("funchost RSS: %s before, %s after two streams' inboxes were filled with 4 MiB messages (%d accepted; peak %s)", mib(before), mib(after), accepted, mib(peak))
	assert.LessOrEqual(t, accepted, 8, "16 MiB per stream: four messages of 4 MiB each")
	assert.Less(t, peak, int64(256<<20), "the host's peak memory stays flat")
}

// TestHardeningIdleStreams (finding 5): an idle legacy SSE stream held
// about 250 KB (an id window and an inbox made up front): 1,024 streams
// took 271 MB. Its state is now made on use.
func TestHardeningIdleStreams(t *testing.T) {
	// Every stream comes from 127.0.0.1: the bound of one address is lifted.
	h, found := launchHost(t, hardened(t), nil, "--port", "0", "--max-connections-per-address", "1024")
	h.awaitEndpoint(t, found)
	pid := h.cmd.Process.Pid
	before, _ := memory(t, pid)
	const n = 1000
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, DisableCompression: true}}
	var bodies []io.Closer
	defer func() {
		for _, b := range bodies {
			b.Close()
		}
	}()
	for i := range n {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.endpoint+"/sse", nil)
		require.NoError(t, err)
		resp, err := client.Do(req)
		require.NoError(t, err, "stream %d", i)
		require.Equal(t, http.StatusOK, resp.StatusCode, "stream %d", i)
		bodies = append(bodies, resp.Body)
		line, err := bufio.NewReader(resp.Body).ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "event: endpoint\n", line)
	}
	after, peak := memory(t, pid)
	per := (after - before) / n
	t.Logf("funchost RSS: %s before, %s with %d idle legacy SSE streams (%d B per stream; peak %s)", mib(before), mib(after), n, per, mib(peak))
	assert.Less(t, per, int64(64<<10), "an idle stream costs the host little")
}

// TestHardeningWorkerTreeDiesWithTheHost (finding 6): after SIGKILL of
// funchost the worker died (parent-death signal) but what it had started
// kept running. Now nothing the worker started outlives funchost: not a
// child, not an orphan, not a process in a session of its own.
func TestHardeningWorkerTreeDiesWithTheHost(t *testing.T) {
	h := startHost(t, hardened(t))
	ex := mustSend(t, h.endpoint, callJSON(1, "spawn", `{}`, ""), nil)
	require.Equal(t, http.StatusOK, ex.status, "%s", ex.body)
	sc := structured(t, ex.body)
	pids := []int{int(sc["worker"].(float64))}
	for _, p := range sc["pids"].([]any) {
		pids = append(pids, int(p.(float64)))
	}
	for _, pid := range pids {
		require.True(t, alive(pid), "pid %d runs before the host is killed", pid)
	}

	h.killed = true
	require.NoError(t, syscall.Kill(h.cmd.Process.Pid, syscall.SIGKILL)) // funchost alone, not its group
	select {
	case <-h.exited:
	case <-time.After(stopTimeout):
		t.Fatal("funchost did not exit on SIGKILL")
	}
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		for _, pid := range pids {
			assert.False(c, alive(pid), "pid %d outlived funchost", pid)
		}
	}, stopTimeout, 20*time.Millisecond)
	for _, pid := range pids {
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL) // leave nothing behind
		}
	}
}

// alive reports whether pid runs (a zombie has ended: it only waits for
// its parent to read its status).
func alive(pid int) bool {
	if errors.Is(syscall.Kill(pid, 0), syscall.ESRCH) {
		return false
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(data)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] != "Z" && fields[0] != "X"
}

// TestHardeningSmallerFindings (finding 7).
func TestHardeningSmallerFindings(t *testing.T) {
	t.Run("the function keys are not the worker's; a disabled function is left out", func(t *testing.T) {
		h := startHostEnv(t, hardened(t), []string{"FUNCHOST_MASTER_KEY=master-key-1", "FUNCHOST_MCP_EXTENSION_KEY=system-key-1",
			"AzureWebJobs.slow.Disabled=true"})
		var headers map[string]string // Anonymous: no key needed
		ex := mustSend(t, h.endpoint, callJSON(1, "env_keys", `{}`, ""), headers)
		require.Equal(t, http.StatusOK, ex.status, "%s", ex.body)
		assert.Empty(t, structured(t, ex.body)["keys"], "the worker's environment holds no function key")

		ex = mustSend(t, h.endpoint, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, headers)
		assert.NotContains(t, string(ex.body), `"name":"slow"`)
		assert.Contains(t, string(ex.body), `"name":"spawn"`)
		assert.Contains(t, h.console.String(), `slow: mcpToolTrigger (disabled: the app setting AzureWebJobs.slow.Disabled is "true")`)
	})

	t.Run("ids that cannot be echoed are refused", func(t *testing.T) {
		h := startHost(t, hardened(t))
		for _, id := range []string{`"\ud800"`, `"a\udc00b"`, `1e999`, `-1e400`} {
			ex := mustSend(t, h.endpoint, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`, map[string]string{"Accept": "application/json"})
			assert.Equal(t, http.StatusBadRequest, ex.status, id)
			assert.JSONEq(t, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: id must be a string or a number"}}`, string(ex.body), id)
		}
	})

	t.Run("a session token stays within what the host accepts", func(t *testing.T) {
		h := startHost(t, hardened(t))
		name := strings.Repeat("n", 3<<20)
		ex := mustSend(t, h.endpoint, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","clientInfo":{"name":"`+name+`","version":"1"}}}`, nil)
		require.Equal(t, http.StatusOK, ex.status)
		token := ex.header.Get("Mcp-Session-Id")
		assert.Less(t, len(token), 4<<10)
		ex = mustSend(t, h.endpoint, `{"jsonrpc":"2.0","id":2,"method":"ping"}`, map[string]string{"Mcp-Session-Id": token})
		assert.Equal(t, http.StatusOK, ex.status, "%s", ex.body)
	})

	// Start-up refusals: funchost exits at once with the reason.
	startup := func(t *testing.T, setup func(dir string)) (int, string) {
		t.Helper()
		dir := t.TempDir()
		setup(dir)
		ctx, cancel := context.WithTimeout(t.Context(), startTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, funchost(t), "start", "--script-root", dir, "--port", "0")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		require.NoError(t, ctx.Err(), "funchost did not return: %s", out.String())
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "funchost did not fail: %v\n%s", err, out.String())
		return exit.ExitCode(), out.String()
	}
	for _, tc := range []struct {
		name, message string
		setup         func(t *testing.T, dir string)
	}{
		{"host.json a named pipe", "host.json: not a regular file (a named pipe): not read", func(t *testing.T, dir string) {
			require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "host.json"), 0o644))
		}},
		{"local.settings.json a named pipe", "local.settings.json: not a regular file (a named pipe): not read", func(t *testing.T, dir string) {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "host.json"), []byte(hardHostJSON), 0o644))
			require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "local.settings.json"), 0o644))
		}},
		{"host.json of 2 MiB", "host.json: 2097178 bytes, more than the limit of 1048576: not read", func(t *testing.T, dir string) {
			big := `{"version":"2.0","pad":"` + strings.Repeat("x", 2<<20) + `"}`
			require.NoError(t, os.WriteFile(filepath.Join(dir, "host.json"), []byte(big), 0o644))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := startup(t, func(dir string) { tc.setup(t, dir) })
			assert.Equal(t, 1, code)
			assert.Contains(t, out, tc.message)
		})
	}
}

// TestHardeningInputValidation (finding 8): funchost checks a call's
// arguments against the tool's input schema before it forwards the call,
// with the worker's message: -32602 before 2025-11-25, an isError result
// from 2025-11-25 on. The app here checks nothing itself.
func TestHardeningInputValidation(t *testing.T) {
	h := startHost(t, hardened(t))
	const message = "Input of tool 'check' does not match its input schema: at '/days' (/properties/days/maximum): maximum: got 9, want 7"
	ex := mustSend(t, h.endpoint, callJSON(1, "check", `{"city":"Oslo","days":9}`, ""), map[string]string{"MCP-Protocol-Version": "2025-06-18"})
	require.Equal(t, http.StatusOK, ex.status)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":`+string(mustMarshal(message))+`}}`, string(ex.body))

	ex = mustSend(t, h.endpoint, callJSON(2, "check", `{"city":"Oslo","days":9}`, ""), map[string]string{"MCP-Protocol-Version": "2025-11-25"})
	require.Equal(t, http.StatusOK, ex.status)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":`+string(mustMarshal(message))+`}],"isError":true}}`, string(ex.body))

	ex = mustSend(t, h.endpoint, callJSON(3, "check", `{"city":"Oslo","days":3}`, ""), map[string]string{"MCP-Protocol-Version": "2025-11-25"})
	require.Equal(t, http.StatusOK, ex.status)
	assert.Equal(t, true, structured(t, ex.body)["checked"])
	// The host's log lines reach the console within moments.
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		assert.Equal(c, 1, strings.Count(h.console.String(), "Executed 'Functions.check'"), "only the valid call reached the worker")
	}, stopTimeout, 20*time.Millisecond)
}
