package tests

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	funchostpkg "github.com/funcmcp/funcmcp/host"
)

// The standing hostile suite. It attacks every method of the MCP method
// table (host.Methods), in every era that has it (a legacy session of
// 2025-03-26, which allows batches, and a 2026-07-28 request), with every
// input a client controls:
//
//   - oversized: a 1 MiB JSON-RPC id, every string of the method's example
//     params at hundreds of KiB, a _meta with a 512 KiB member, a 64 KiB
//     traceparent, tracestate and baggage;
//   - numerous: many sessions each sending hundreds of distinct 4 KiB
//     strings (legacy, in batches), and many requests each filling every
//     list of the params with 255 (or, every other one, 15) distinct 4 KiB
//     strings (modern), their streams held open; thousands of distinct target names; for a method
//     that may run as a task, hundreds of tasks of the app's task tool;
//   - rotating identity: every request has a fresh Authorization,
//     x-functions-key, client principal headers and X-Forwarded-For, and
//     comes from one of several loopback source addresses.
//
// Throughout, a well-behaved client on 127.0.0.1 calls a tool, starts a
// task and asks whoami with forged principal headers; every call of its
// must succeed and no forged identity may reach the tool. The resident
// memory of funchost and of the worker (VmRSS, VmHWM of /proc) must stay
// under hostileCeiling over their idle size, and come back near idle once
// the attacks end. It runs with telemetry off and on (a real OpenTelemetry
// receiver, tests/otelbackend); with telemetry on, metric series and span
// names name only known functions and no attribute is oversized.
//
// A method added to the table is attacked with no edit here: the attacks
// are made from its entry (its example params and target member).

const (
	// hostileCeiling bounds each process's peak resident memory over its
	// idle size, for the whole run.
	hostileCeiling = 256 << 20
	// hostileSettled bounds each process's resident memory over idle once
	// the attacks ended (the Go runtime gives memory back lazily, so it is
	// read for up to hostileSettleTime).
	hostileSettled    = 96 << 20
	hostileSettleTime = 90 * time.Second
	// hostileAddresses is how many loopback source addresses attack
	// (127.0.0.2 and on); the well-behaved client is 127.0.0.1.
	hostileAddresses = 8

	legacyEra = "2025-03-26"
	modernEra = "2026-07-28"

	// The volume of each attack.
	oversizedRequests = 16      // per method and era
	oversizedID       = 1 << 20 // bytes of the oversized JSON-RPC id
	oversizedStrings  = 1 << 20 // bytes of all strings of one oversized request
	numerousSessions  = 208     // legacy sessions per method
	numerousPerSess   = 256     // distinct messages per legacy session
	numerousStreams   = 128     // modern requests with full lists, held
	numerousString    = 4096    // bytes of each distinct string
	numerousList      = 255     // strings in each list
	numerousShortList = 15      // strings in each short list
	distinctNames     = 2200    // distinct 40-byte target names per method
	numerousTasks     = 400     // task calls of a task method, rotating
	attackConcurrency = 8
	// phaseBudget bounds the time of each attack of each method: an attack
	// sends its volume or stops starting requests after phaseBudget,
	// whichever comes first, so the suite's time stays bounded as methods
	// are added (about 3 s per method and era, and per attack kind at most
	// this).
	phaseBudget = 3 * time.Second
)

// hostileFixture is what the suite knows of the sample app: a real target
// for the benign call of each method, and the task tool's arguments. An
// attack needs none of it; it lets the suite check that the method's
// example works and that task floods make real tasks.
var hostileFixture = map[string]string{
	"tools/call":     "get_weather",
	"prompts/get":    "plan_days_off",
	"resources/read": "holidays://countries",
}

const (
	hostileTaskTool = "simulate_epidemic"
	hostileTaskArgs = `{"population":1000,"days":30,"duration_seconds":20}`
)

// TestHostile runs the suite with telemetry off and on.
func TestHostile(t *testing.T) {
	if testing.Short() {
		t.Skip("the hostile suite drives real processes for minutes; -short leaves it out")
	}
	t.Run("telemetry off", func(t *testing.T) { runHostile(t, sample(t), nil, false) })
	t.Run("telemetry on", func(t *testing.T) {
		be := startOTelBackend(t)
		runHostile(t, telemetrySample(t), be, false)
	})
}

// TestHostileServe runs the suite against the sample serving itself in
// one process (`handler serve`): the same attacks, the same ceiling on
// that one process.
func TestHostileServe(t *testing.T) {
	if testing.Short() {
		t.Skip("the hostile suite drives real processes for minutes; -short leaves it out")
	}
	runHostile(t, sample(t), nil, true)
}

// hostileHost is the attacked funchost with its worker.
type hostileHost struct {
	*host
	pids  map[string]int   // "funchost", "worker"
	idle  map[string]int64 // their VmRSS before the attacks
	peak  sync.Map         // name → *atomic.Int64, the largest VmRSS seen
	stopc chan struct{}
}

// runHostile attacks app served by funchost, or by itself in one process
// (serve: `handler serve`, whose one process is named "handler serve").
func runHostile(t *testing.T, app string, be *otelBackend, serve bool) {
	env := []string{"FUNCMCP_AUTH_ISSUER="}
	if be != nil {
		env = append(env, "OTEL_EXPORTER_OTLP_ENDPOINT="+be.url, "OTEL_BSP_SCHEDULE_DELAY=200", "OTEL_METRIC_EXPORT_INTERVAL=500")
	}
	var h *hostileHost
	if serve {
		folder := serveFolder(t, app, filepath.Join("..", "function-app-sample"))
		h = &hostileHost{host: startServe(t, filepath.Join(app, "handler"), folder, env), stopc: make(chan struct{})}
		h.pids = map[string]int{"handler serve": h.cmd.Process.Pid}
	} else {
		h = &hostileHost{host: startHostEnv(t, app, env), stopc: make(chan struct{})}
		h.pids = processTree(t, h.cmd.Process.Pid)
		require.Contains(t, h.pids, "worker", "the worker's process: %v", h.pids)
	}

	good := newGoodClient(t, h.endpoint)
	good.once(t) // warm: the worker has answered before idle is read
	time.Sleep(500 * time.Millisecond)
	h.idle = map[string]int64{}
	for name, pid := range h.pids {
		rss, _ := memory(t, pid)
		h.idle[name] = rss
		h.peak.Store(name, new(atomic.Int64))
	}
	for name := range h.pids {
		t.Logf("idle: %s %s", name, mib(h.idle[name]))
	}
	go h.sample()
	defer close(h.stopc)

	goodDone := good.run()
	atk := newAttacker(h.endpoint)
	for _, m := range funchostpkg.Methods() {
		for _, era := range []string{legacyEra, modernEra} {
			if !m.Has(era) {
				continue
			}
			t.Run(m.Name+" "+era, func(t *testing.T) {
				atk.method(t, m, era)
				h.checkCeiling(t)
			})
		}
	}
	good.stop()
	<-goodDone
	t.Logf("the well-behaved client: %d calls, %d tasks, %d forged-identity checks", good.calls.Load(), good.tasks.Load(), good.forged.Load())
	assert.Empty(t, good.failures(), "the well-behaved client was served throughout")
	assert.Positive(t, good.calls.Load())
	h.checkCeiling(t)
	for name, pid := range h.pids {
		v, _ := h.peak.Load(name)
		_, hwm, _ := readMemory(pid)
		t.Logf("%s: idle %s, peak %s sampled, VmHWM %s", name, mib(h.idle[name]), mib(v.(*atomic.Int64).Load()), mib(hwm))
	}
	h.checkSettles(t)
	if be != nil {
		checkHostileTelemetry(t, be, good)
	}
}

// processTree finds funchost (pid) and the worker (its descendant named
// handler).
func processTree(t *testing.T, pid int) map[string]int {
	t.Helper()
	pids := map[string]int{"funchost": pid}
	deadline := time.Now().Add(startTimeout)
	for time.Now().Before(deadline) {
		entries, err := os.ReadDir("/proc")
		require.NoError(t, err)
		parent, comm := map[int]int{}, map[int]string{}
		for _, e := range entries {
			p, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
			if err != nil {
				continue
			}
			// pid (comm) state ppid ...
			s := string(stat)
			open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
			if open < 0 || closing < 0 {
				continue
			}
			fields := strings.Fields(s[closing+1:])
			if len(fields) < 2 {
				continue
			}
			parent[p], _ = strconv.Atoi(fields[1])
			comm[p] = s[open+1 : closing]
		}
		for p, c := range comm {
			if c != "handler" {
				continue
			}
			for a := parent[p]; a > 1; a = parent[a] {
				if a == pid {
					pids["worker"] = p
					return pids
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return pids
}

// sample reads every process's VmRSS every 50 ms, keeping the largest.
func (h *hostileHost) sample() {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		for name, pid := range h.pids {
			if rss, _, err := readMemory(pid); err == nil {
				v, _ := h.peak.Load(name)
				p := v.(*atomic.Int64)
				for old := p.Load(); rss > old && !p.CompareAndSwap(old, rss); old = p.Load() {
				}
			}
		}
		select {
		case <-h.stopc:
			return
		case <-tick.C:
		}
	}
}

// checkCeiling fails the test when a process's peak so far (sampled, and
// the kernel's VmHWM) passed idle + hostileCeiling.
func (h *hostileHost) checkCeiling(t *testing.T) {
	t.Helper()
	for name, pid := range h.pids {
		v, _ := h.peak.Load(name)
		peak := v.(*atomic.Int64).Load()
		if _, hwm, err := readMemory(pid); err == nil && hwm > peak {
			peak = hwm
		}
		assert.LessOrEqual(t, peak-h.idle[name], int64(hostileCeiling),
			"%s's peak RSS %s is more than %s over its idle %s", name, mib(peak), mib(hostileCeiling), mib(h.idle[name]))
	}
}

// checkSettles waits for every process's RSS to come back near idle.
func (h *hostileHost) checkSettles(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(hostileSettleTime)
	for {
		over := map[string]string{}
		for name, pid := range h.pids {
			rss, _, err := readMemory(pid)
			require.NoError(t, err)
			if rss-h.idle[name] > hostileSettled {
				over[name] = mib(rss) + " (idle " + mib(h.idle[name]) + ")"
			}
		}
		if len(over) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("RSS did not come back within %s of idle in %s: %v", mib(hostileSettled), hostileSettleTime, over)
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// randomText is n random bytes of [0-9a-f].
func randomText(n int) string {
	b := make([]byte, (n+1)/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)[:n]
}

// forgedIdentity is a fresh set of client-sent identity headers: a bearer
// token, a function key, App Service's client principal headers naming
// mallory with every scope, and a forwarded address.
func forgedIdentity() map[string]string {
	principal := base64.StdEncoding.EncodeToString([]byte(`{"auth_typ":"aad","claims":[{"typ":"scp","val":"Claims.Read"},{"typ":"sub","val":"mallory"}],"name_typ":"name","role_typ":"roles"}`))
	return map[string]string{
		"Authorization":              "Bearer " + randomText(40),
		"X-Functions-Key":            randomText(32),
		"X-MS-CLIENT-PRINCIPAL":      principal,
		"X-MS-CLIENT-PRINCIPAL-ID":   "mallory-" + randomText(8),
		"X-MS-CLIENT-PRINCIPAL-NAME": "mallory",
		"X-MS-CLIENT-PRINCIPAL-IDP":  "aad",
		"X-Forwarded-For":            fmt.Sprintf("203.0.113.%d", 1+int(randomText(2)[0])%200),
	}
}

// loopbackClient is an HTTP client whose connections come from ip.
func loopbackClient(ip net.IP, conns int) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: ip}, Timeout: 10 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext, MaxIdleConnsPerHost: conns, MaxConnsPerHost: 4 * conns}}
}

// rpc is one JSON-RPC message of the suite.
type rpc struct {
	id     any // nil for a notification
	method string
	params map[string]any
}

// body is the message as era spells it (2026-07-28 puts the revision
// and the client's capabilities in params._meta, with extra members).
func (m rpc) value(era string, extraMeta map[string]any) map[string]any {
	params := map[string]any{}
	for k, v := range m.params {
		params[k] = v
	}
	meta := map[string]any{}
	if era == modernEra {
		meta["io.modelcontextprotocol/protocolVersion"] = modernEra
		meta["io.modelcontextprotocol/clientCapabilities"] = map[string]any{"extensions": map[string]any{tasksExtension: map[string]any{}}}
	}
	for k, v := range extraMeta {
		meta[k] = v
	}
	if len(meta) > 0 {
		params["_meta"] = meta
	}
	v := map[string]any{"jsonrpc": "2.0", "method": m.method, "params": params}
	if m.id != nil {
		v["id"] = m.id
	}
	return v
}

// headers are the HTTP headers of a message of era: the revision, and the
// 2026-07-28 routing headers (Mcp-Name only when the target is short
// enough to be a header at all).
func headersOf(era, method, nameParam string, params map[string]any) map[string]string {
	h := forgedIdentity()
	h["MCP-Protocol-Version"] = era
	if era == modernEra {
		h["Mcp-Method"] = method
		if name, ok := params[nameParam].(string); ok && nameParam != "" && len(name) <= 4096 {
			h["Mcp-Name"] = name
		}
	}
	return h
}

// mapStrings returns v with every string replaced by str(path) and every
// list of strings by list(path).
func mapStrings(v any, path string, str func(path string) string, list func(path string) []any) any {
	switch v := v.(type) {
	case string:
		return str(path)
	case []any:
		if len(v) > 0 {
			if _, ok := v[0].(string); ok {
				return list(path)
			}
		}
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = mapStrings(e, path+"/"+strconv.Itoa(i), str, list)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = mapStrings(e, path+"/"+k, str, list)
		}
		return out
	}
	return v
}

// countStrings counts the strings of v (a list counts as its strings).
func countStrings(v any) int {
	n := 0
	mapStrings(v, "", func(string) string { n++; return "" }, func(string) []any { n++; return nil })
	return n
}

// example decodes a method's example params.
func example(t *testing.T, m funchostpkg.MethodSpec) map[string]any {
	t.Helper()
	var p map[string]any
	require.NoError(t, json.Unmarshal([]byte(m.Example), &p), "%s's example params", m.Name)
	return p
}

// attacker sends the attacks from its loopback addresses.
type attacker struct {
	endpoint string
	clients  []*http.Client
	next     atomic.Int64
}

func newAttacker(endpoint string) *attacker {
	a := &attacker{endpoint: endpoint}
	for i := range hostileAddresses {
		a.clients = append(a.clients, loopbackClient(net.IPv4(127, 0, 0, byte(2+i)), attackConcurrency))
	}
	return a
}

func (a *attacker) client() *http.Client {
	return a.clients[int(a.next.Add(1))%len(a.clients)]
}

// reply is what one attack request got: the HTTP status and, for a
// single JSON-RPC reply, its error code.
type reply struct {
	status int
	code   int
	body   []byte
}

// post sends body and reads the reply; a stream that stays open longer
// than hold is kept open (its body unread) and handed to keep.
func (a *attacker) post(ctx context.Context, client *http.Client, body []byte, headers map[string]string, keep func(io.Closer)) (reply, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.endpoint, strings.NewReader(string(body)))
	if err != nil {
		return reply{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return reply{}, err
	}
	r := reply{status: resp.StatusCode}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// Read the first event; a stream still open after it is held.
		first := make(chan []byte, 1)
		go func() {
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
			for sc.Scan() {
				if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
					first <- []byte(data)
					return
				}
			}
			first <- nil
		}()
		select {
		case r.body = <-first:
		case <-time.After(2 * time.Second):
		}
		if keep != nil {
			keep(resp.Body)
		} else {
			resp.Body.Close()
		}
	} else {
		r.body, err = io.ReadAll(io.LimitReader(resp.Body, 64<<20))
		resp.Body.Close()
		if err != nil {
			return r, err
		}
	}
	var msg struct {
		Error *struct{ Code int } `json:"error"`
	}
	if json.Unmarshal(r.body, &msg) == nil && msg.Error != nil {
		r.code = msg.Error.Code
	}
	return r, nil
}

// held are streams kept open until a method's attacks end.
type held struct {
	mu  sync.Mutex
	all []io.Closer
	max int
}

func (h *held) keep(c io.Closer) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.all) >= h.max {
		c.Close()
		return
	}
	h.all = append(h.all, c)
}

func (h *held) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.all {
		c.Close()
	}
	h.all = nil
}

// parallel runs up to n jobs, attackConcurrency at once, each on the next
// attacking address, starting none after budget; it returns the first
// transport error.
func (a *attacker) parallel(ctx context.Context, n int, budget time.Duration, job func(ctx context.Context, i int, c *http.Client) error) error {
	end := time.Now().Add(budget)
	var wg sync.WaitGroup
	var first atomic.Value
	jobs := make(chan int)
	for range attackConcurrency {
		wg.Go(func() {
			for i := range jobs {
				if err := job(ctx, i, a.client()); err != nil {
					first.CompareAndSwap(nil, err)
				}
			}
		})
	}
	for i := range n {
		if ctx.Err() != nil || time.Now().After(end) {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		return err
	}
	return ctx.Err()
}

// method runs every attack on method m in era.
func (a *attacker) method(t *testing.T, m funchostpkg.MethodSpec, era string) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	streams := &held{max: numerousStreams}
	defer streams.closeAll()
	ex := example(t, m)
	var session string
	if era == legacyEra && m.Name != "initialize" {
		var err error
		session, err = a.initialize(ctx, a.clients[0], "benign")
		require.NoError(t, err)
	}

	// The example, benign: the method is served (not method-not-found,
	// not a parse or request error), which also keeps the examples true.
	benign := ex
	if target, ok := hostileFixture[m.Name]; ok {
		benign = mapStrings(ex, "", func(p string) string {
			if p == "/"+m.NameParam {
				return target
			}
			return "Oslo"
		}, func(string) []any { return []any{"holidays://countries"} }).(map[string]any)
	}
	msg := rpc{id: 1, method: m.Name, params: benign}
	hdr := headersOf(era, m.Name, m.NameParam, benign)
	if session != "" {
		hdr["Mcp-Session-Id"] = session
	}
	r, err := a.post(ctx, a.clients[0], mustMarshal(msg.value(era, nil)), hdr, nil)
	require.NoError(t, err)
	require.Less(t, r.status, 500, "%s's example: %s", m.Name, r.body)
	require.NotContains(t, []int{-32601, -32600, -32700}, r.code, "%s's example (era %s) is served: %s", m.Name, era, r.body)

	// Oversized: a 1 MiB id, the strings of the params at 1 MiB in all,
	// a big _meta and trace context.
	per := oversizedStrings / max(1, countStrings(ex))
	bigMeta := map[string]any{
		"traceparent": "00-" + randomText(64<<10), "tracestate": randomText(64 << 10), "baggage": randomText(64 << 10),
		"x-hostile-" + randomText(8): randomText(512 << 10),
	}
	err = a.parallel(ctx, oversizedRequests, phaseBudget, func(ctx context.Context, i int, c *http.Client) error {
		p := mapStrings(ex, "", func(string) string { return randomText(per) }, func(string) []any { return []any{randomText(per)} }).(map[string]any)
		msg := rpc{id: randomText(oversizedID), method: m.Name, params: p}
		hdr := headersOf(era, m.Name, m.NameParam, p)
		if session != "" {
			hdr["Mcp-Session-Id"] = session
		}
		_, err := a.post(ctx, c, mustMarshal(msg.value(era, bigMeta)), hdr, streams.keep)
		return err
	})
	require.NoError(t, err, "oversized %s", m.Name)

	// Numerous: distinct 4 KiB strings and full lists, from many sessions
	// (legacy) or requests (modern), streams held.
	distinct := func(string) string { return randomText(numerousString) }
	fullList := func(string) []any {
		l := make([]any, numerousList)
		for i := range l {
			l[i] = randomText(numerousString)
		}
		return l
	}
	if era == legacyEra {
		err = a.parallel(ctx, numerousSessions, phaseBudget, func(ctx context.Context, i int, c *http.Client) error {
			if m.Name == "initialize" {
				_, err := a.post(ctx, c, mustMarshal(rpc{id: 1, method: m.Name, params: mapStrings(ex, "", distinct, fullList).(map[string]any)}.value(era, nil)), headersOf(era, m.Name, "", nil), nil)
				return err
			}
			s, err := a.initialize(ctx, c, randomText(numerousString))
			if err != nil {
				return err
			}
			for sent := 0; sent < numerousPerSess; {
				batch := make([]any, 0, 100)
				for ; len(batch) < 100 && sent < numerousPerSess; sent++ {
					batch = append(batch, rpc{id: sent, method: m.Name, params: mapStrings(ex, "", distinct, fullList).(map[string]any)}.value(era, nil))
				}
				hdr := headersOf(era, m.Name, "", nil)
				hdr["Mcp-Session-Id"] = s
				if _, err := a.post(ctx, c, mustMarshal(batch), hdr, streams.keep); err != nil {
					return err
				}
			}
			return nil
		})
	} else {
		// Every other request's lists are short enough to pass a byte
		// bound on what one request may follow, so that what is kept per
		// client and in all is reached too.
		shortList := func(string) []any {
			l := make([]any, numerousShortList)
			for i := range l {
				l[i] = randomText(numerousString)
			}
			return l
		}
		err = a.parallel(ctx, numerousStreams, phaseBudget, func(ctx context.Context, i int, c *http.Client) error {
			lists := fullList
			if i%2 == 1 {
				lists = shortList
			}
			p := mapStrings(ex, "", distinct, lists).(map[string]any)
			_, err := a.post(ctx, c, mustMarshal(rpc{id: randomText(16), method: m.Name, params: p}.value(era, nil)), headersOf(era, m.Name, m.NameParam, p), streams.keep)
			return err
		})
	}
	require.NoError(t, err, "numerous %s", m.Name)

	// Distinct target names: the metric series and caches keyed by them.
	if m.NameParam != "" {
		err = a.parallel(ctx, distinctNames, phaseBudget, func(ctx context.Context, i int, c *http.Client) error {
			p := mapStrings(ex, "", func(path string) string {
				if path == "/"+m.NameParam {
					return "hostile_" + randomText(32)
				}
				return "v"
			}, func(string) []any { return []any{"v"} }).(map[string]any)
			hdr := headersOf(era, m.Name, m.NameParam, p)
			if session != "" {
				hdr["Mcp-Session-Id"] = session
			}
			_, err := a.post(ctx, c, mustMarshal(rpc{id: i, method: m.Name, params: p}.value(era, nil)), hdr, nil)
			return err
		})
		require.NoError(t, err, "distinct names of %s", m.Name)
	}

	// A method that may run as a task: tasks of the app's task tool, each
	// under a fresh identity.
	if m.Task && era == modernEra {
		var made atomic.Int64
		err = a.parallel(ctx, numerousTasks, phaseBudget, func(ctx context.Context, i int, c *http.Client) error {
			p := map[string]any{m.NameParam: hostileTaskTool, "arguments": json.RawMessage(hostileTaskArgs)}
			r, err := a.post(ctx, c, mustMarshal(rpc{id: i, method: m.Name, params: p}.value(era, nil)), headersOf(era, m.Name, m.NameParam, p), nil)
			if err == nil && r.code == 0 && strings.Contains(string(r.body), `"taskId"`) {
				made.Add(1)
			}
			return err
		})
		require.NoError(t, err, "tasks of %s", m.Name)
		t.Logf("%d of %d task calls under rotating identities made a task", made.Load(), numerousTasks)
	}
}

// initialize opens a legacy session of 2025-03-26 with clientInfo name.
func (a *attacker) initialize(ctx context.Context, c *http.Client, name string) (string, error) {
	body := mustMarshal(rpc{id: 0, method: "initialize", params: map[string]any{
		"protocolVersion": legacyEra, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": name, "version": "1"},
	}}.value(legacyEra, nil))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.endpoint, strings.NewReader(string(body)))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range forgedIdentity() {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	s := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || s == "" {
		return "", fmt.Errorf("initialize: HTTP %d, session %q", resp.StatusCode, s)
	}
	return s, nil
}

// goodClient is the well-behaved client: from 127.0.0.1, without
// credentials, it calls get_weather, starts a task now and then, and asks
// whoami with forged principal headers.
type goodClient struct {
	endpoint string
	client   *http.Client
	done     chan struct{}
	calls    atomic.Int64
	tasks    atomic.Int64
	forged   atomic.Int64
	mu       sync.Mutex
	failed   map[string][]string // by what failed: the first few
	count    map[string]int
}

func newGoodClient(t *testing.T, endpoint string) *goodClient {
	return &goodClient{endpoint: endpoint, client: loopbackClient(net.IPv4(127, 0, 0, 1), 4), done: make(chan struct{}),
		failed: map[string][]string{}, count: map[string]int{}}
}

func (g *goodClient) fail(what, format string, args ...any) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.count[what]++
	if len(g.failed[what]) < 3 {
		g.failed[what] = append(g.failed[what], time.Now().Format("15:04:05.000 ")+fmt.Sprintf(format, args...))
	}
}

// failures says what failed, how often, and the first failures of each.
func (g *goodClient) failures() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for what, n := range g.count {
		out = append(out, fmt.Sprintf("%s failed %d times: %s", what, n, strings.Join(g.failed[what], "; ")))
	}
	sort.Strings(out)
	return out
}

// call makes one 2026-07-28 tools/call and returns its result.
func (g *goodClient) call(tool, args string, headers map[string]string) (map[string]json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), clientTimeout)
	defer cancel()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args +
		`,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"` + tasksExtension + `":{}}}}}}`
	h := modernHeaders(tool)
	for k, v := range headers {
		h[k] = v
	}
	ex, err := sendWith(ctx, g.client, g.endpoint, body, h)
	if err != nil {
		return nil, err
	}
	var r taskReply
	if err := json.Unmarshal(ex.body, &r); err != nil {
		return nil, fmt.Errorf("%s: HTTP %d %q", tool, ex.status, ex.body)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("%s: HTTP %d error %d %s", tool, ex.status, r.Error.Code, r.Error.Message)
	}
	if string(r.Result["isError"]) == "true" {
		return nil, fmt.Errorf("%s: a tool error: %s", tool, ex.body)
	}
	return r.Result, nil
}

// once makes each of the client's calls once.
func (g *goodClient) once(t *testing.T) {
	_, err := g.call("get_weather", `{"city":"Oslo"}`, nil)
	require.NoError(t, err)
}

// run calls until stop, every 100 ms.
func (g *goodClient) run() <-chan struct{} {
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-g.done:
				return
			case <-tick.C:
			}
			g.calls.Add(1)
			if _, err := g.call("get_weather", `{"city":"Oslo"}`, nil); err != nil {
				g.fail("get_weather", "%v", err)
			}
			if i%10 == 0 {
				g.tasks.Add(1)
				r, err := g.call(hostileTaskTool, `{"population":1000,"days":10,"duration_seconds":1}`, nil)
				if err != nil {
					g.fail("a task", "%v", err)
				} else if string(r["resultType"]) != `"task"` {
					g.fail("a task", "no task made: %v", r)
				}
			}
			if i%10 == 5 {
				g.forged.Add(1)
				r, err := g.call("whoami", `{}`, forgedIdentity())
				if err != nil {
					g.fail("whoami", "%v", err)
				} else if sc := string(r["structuredContent"]); !strings.Contains(sc, `"authenticated":false`) {
					g.fail("whoami with forged principal headers", "%s", sc)
				}
			}
		}
	}()
	return finished
}

func (g *goodClient) stop() { close(g.done) }

// checkHostileTelemetry: after the attacks, a tool called for the first
// time gets a metric series of its own (the SDK's 2,000-series bound was
// not filled by client-chosen names), no series overflowed, and every span
// name and attribute is short.
func checkHostileTelemetry(t *testing.T, be *otelBackend, g *goodClient) {
	t.Helper()
	_, err := g.call("mortgage_payment", `{"principal":350000,"annual_rate_percent":4.5,"years":30}`, nil)
	require.NoError(t, err)
	const maxAttr = 1024
	deadline := time.Now().Add(30 * time.Second)
	for {
		points, spans := readHostileTelemetry(t, be)
		var fresh, overflow bool
		for _, p := range points {
			fresh = fresh || p["gen_ai.tool.name"] == "mortgage_payment"
			overflow = overflow || p["otel.metric.overflow"] == "true"
		}
		if fresh || time.Now().After(deadline) {
			assert.True(t, fresh, "mortgage_payment's duration series was exported")
			assert.False(t, overflow, "no metric series overflowed")
			var long []string
			for _, s := range spans {
				if len(s.name) > 256 {
					long = append(long, "span name of "+strconv.Itoa(len(s.name))+" bytes")
				}
				for k, v := range s.attrs {
					if len(v) > maxAttr {
						long = append(long, s.name[:min(len(s.name), 64)]+" "+k+" of "+strconv.Itoa(len(v))+" bytes")
					}
				}
			}
			sort.Strings(long)
			assert.Empty(t, long[:min(len(long), 10)], "span names and attributes are bounded")
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// readHostileTelemetry reads the backend's file: every data point's
// attributes, and the spans.
func readHostileTelemetry(t *testing.T, be *otelBackend) ([]map[string]string, []recvSpan) {
	t.Helper()
	spans, _ := be.read(t)
	data, err := os.ReadFile(be.file)
	if os.IsNotExist(err) {
		return nil, spans
	}
	require.NoError(t, err)
	var points []map[string]string
	for _, line := range strings.Split(string(data), "\n") {
		var doc struct {
			ResourceMetrics []struct {
				ScopeMetrics []struct {
					Metrics []struct {
						Name      string
						Histogram struct {
							DataPoints []struct{ Attributes []otlpKV } `json:"dataPoints"`
						}
						Sum struct {
							DataPoints []struct{ Attributes []otlpKV } `json:"dataPoints"`
						}
					}
				}
			}
		}
		if json.Unmarshal([]byte(line), &doc) != nil {
			continue
		}
		for _, rm := range doc.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					for _, dp := range append(m.Histogram.DataPoints, m.Sum.DataPoints...) {
						a := otlpAttrs(dp.Attributes)
						a["metric"] = m.Name
						points = append(points, a)
					}
				}
			}
		}
	}
	return points, spans
}

// TestHostileTaskListeners: listeners naming one task share its result.
// 32 subscriptions/listen streams follow a task of tests/taskapp whose
// result is 20 MiB; once it completes, every stream gets what the task
// extension says of it, and funchost's memory stays within the suite's
// ceiling (each listener once got its own copy of the result: a peak of
// 1.9 GiB).
func TestHostileTaskListeners(t *testing.T) {
	if testing.Short() {
		t.Skip("drives real processes; -short leaves it out")
	}
	const listeners, resultBytes = 32, 20 << 20
	h := startHostEnv(t, taskAppDir(t), []string{"FUNCMCP_AUTH_ISSUER="})
	idle, _ := memory(t, h.cmd.Process.Pid)
	c := taskClient{endpoint: h.endpoint}
	id := c.create(t, "sized", map[string]any{"bytes": resultBytes, "ms": 1500})

	body := string(mustMarshal(rpc{id: 1, method: "subscriptions/listen", params: map[string]any{
		"notifications": map[string]any{"taskIds": []string{id}},
	}}.value(modernEra, nil)))
	hdr := map[string]string{"MCP-Protocol-Version": modernEra, "Mcp-Method": "subscriptions/listen"}
	var wg sync.WaitGroup
	got := make([]int, listeners)
	errs := make([]error, listeners)
	for i := range listeners {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.endpoint, strings.NewReader(body))
			if err != nil {
				errs[i] = err
				return
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			for k, v := range hdr {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				errs[i] = err
				return
			}
			defer resp.Body.Close()
			// Read until a notification says the task completed.
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
			for sc.Scan() {
				data, ok := strings.CutPrefix(sc.Text(), "data: ")
				if !ok {
					continue
				}
				got[i] += len(data)
				if strings.Contains(data, `"notifications/tasks"`) && strings.Contains(data, `"completed"`) {
					return
				}
			}
			errs[i] = fmt.Errorf("the stream ended without the task's completion (%v)", sc.Err())
		})
	}
	wg.Wait()
	for i, err := range errs {
		assert.NoError(t, err, "listener %d", i)
	}
	_, peak := memory(t, h.cmd.Process.Pid)
	t.Logf("funchost: idle %s, peak %s; the first listener read %d bytes", mib(idle), mib(peak), got[0])
	assert.LessOrEqual(t, peak-idle, int64(hostileCeiling), "funchost's peak RSS %s is more than %s over its idle %s", mib(peak), mib(hostileCeiling), mib(idle))
	r := c.await(t, id, "completed")
	assert.NotNil(t, r.Result, "the task's result is still read with tasks/get")
}
