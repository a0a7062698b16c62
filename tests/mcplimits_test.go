package tests

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// The limits tests (issue 25, findings 4, 5, 7, 8, 11 and 12) drive the
// sample app on a real funchost with what one client did to bloat it, and
// log the host's memory (VmRSS, VmHWM) around it. Memory bounds are
// generous; times are never asserted.

// askingMeta is the _meta of a 2026-07-28 request of a client that can be
// asked (elicitation).
const askingMeta = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
	`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}`

// bookArgs are book_days_off's arguments (one working day in GB) plus
// extra members.
func bookArgs(extra string) string {
	return `{"country":"GB","from":"2026-08-04","to":"2026-08-04"` + extra + `}`
}

// bookDaysOff calls book_days_off on 2026-07-28 with args and more params
// members (with their leading comma), from any goroutine.
func bookDaysOff(ctx context.Context, url string, id int, args, more string, headers map[string]string) (exchange, error) {
	return bookDaysOffFrom(ctx, "", url, id, args, more, headers)
}

// bookDaysOffFrom is bookDaysOff of the client at loopback address from.
func bookDaysOffFrom(ctx context.Context, from, url string, id int, args, more string, headers map[string]string) (exchange, error) {
	body := `{"jsonrpc":"2.0","id":` + fmt.Sprint(id) + `,"method":"tools/call","params":{"name":"book_days_off","arguments":` +
		args + more + `,"_meta":` + askingMeta + `}}`
	hdr := modernHeaders("book_days_off")
	for k, v := range headers {
		hdr[k] = v
	}
	return sendWith(ctx, clientFrom(from), url, body, hdr)
}

// inputRequired is the part of an input_required result the tests read.
type inputRequired struct {
	Result struct {
		ResultType    string                     `json:"resultType"`
		InputRequests map[string]json.RawMessage `json:"inputRequests"`
		RequestState  string                     `json:"requestState"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func readInputRequired(t *testing.T, ex exchange) inputRequired {
	t.Helper()
	var r inputRequired
	require.NoError(t, json.Unmarshal(ex.body, &r), "%d %.300s", ex.status, ex.body)
	return r
}

// padding is a JSON array of n bytes' worth of small numbers.
func padding(n int) string {
	var b strings.Builder
	b.Grow(n + 2)
	b.WriteString(`[1`)
	for b.Len() < n {
		b.WriteString(`,1`)
	}
	b.WriteByte(']')
	return b.String()
}

// manyArguments is a JSON object of n members "aNNNNNN":"v".
func manyArguments(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"a%06d":"vvv"`, i)
	}
	b.WriteByte('}')
	return b.String()
}

// burst sends body n times at once and returns the replies.
func burst(t *testing.T, url string, n int, body func(i int) string, headers map[string]string) []exchange {
	t.Helper()
	out := make([]exchange, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), 2*clientTimeout)
			defer cancel()
			out[i], errs[i] = send(ctx, url, body(i), headers)
		})
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	return out
}

// TestLimitsRequestStateWithHugeArguments (finding 4): a valid
// requestState sent back with 4 MB of arguments, 16 at once. The state's
// digest decoded the arguments into `any` and encoded them again before the
// argument limits applied: peak RSS 2,846 MB. Now the limits come first
// and the digest reads the arguments as they are.
func TestLimitsRequestStateWithHugeArguments(t *testing.T) {
	h := startHost(t, sample(t))
	pid := h.cmd.Process.Pid
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	ex, err := bookDaysOff(ctx, h.endpoint, 1, bookArgs(""), "", nil)
	require.NoError(t, err)
	state := readInputRequired(t, ex).Result.RequestState
	require.NotEmpty(t, state, "%s", ex.body)
	before, _ := memory(t, pid)

	huge := bookArgs(`,"pad":` + padding(4_000_000))
	replies := burst(t, h.endpoint, 16, func(i int) string {
		return `{"jsonrpc":"2.0","id":` + fmt.Sprint(i) + `,"method":"tools/call","params":{"name":"book_days_off","arguments":` +
			huge + `,"requestState":"` + state + `","_meta":` + askingMeta + `}}`
	}, modernHeaders("book_days_off"))
	for _, ex := range replies {
		r := readInputRequired(t, ex)
		require.NotNil(t, r.Error, "%.300s", ex.body)
		assert.Equal(t, -32602, r.Error.Code)
		assert.Contains(t, r.Error.Message, "the arguments exceed")
	}
	after, peak := memory(t, pid)
	t.Logf("funchost RSS: %s before, %s after 16 requestStates with 4 MB of arguments at once (peak %s)", mib(before), mib(after), mib(peak))
	assert.Less(t, peak, int64(512<<20), "the digest does not decode the arguments")
}

// TestLimitsPromptAndCompletionArguments (finding 11): prompts/get with
// 240,000 arguments (3.7 MB), 16 at once, and completion/complete with as
// many context.arguments, had no argument limits (1,270 MB and 710 MB);
// tools/call refused them but peaked at 433 MB with 8 at once. Now each is
// refused before its arguments are decoded.
func TestLimitsPromptAndCompletionArguments(t *testing.T) {
	h := startHost(t, sample(t))
	pid := h.cmd.Process.Pid
	legacy := map[string]string{"MCP-Protocol-Version": "2025-06-18", "Accept": "application/json"}
	args := manyArguments(240_000)
	require.Greater(t, len(args), 3_600_000)

	for _, tc := range []struct {
		name string
		n    int
		body func(i int) string
	}{
		{"tools/call", 8, func(i int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"primes","arguments":%s}}`, i, args)
		}},
		{"prompts/get", 16, func(i int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"prompts/get","params":{"name":"plan_days_off","arguments":%s}}`, i, args)
		}},
		{"completion/complete", 16, func(i int) string {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"plan_days_off"},`+
				`"argument":{"name":"year","value":"20"},"context":{"arguments":%s}}}`, i, args)
		}},
	} {
		before, _ := memory(t, pid)
		replies := burst(t, h.endpoint, tc.n, tc.body, legacy)
		for _, ex := range replies {
			assert.Equal(t, http.StatusOK, ex.status, "%s: %.300s", tc.name, ex.body)
			r := readInputRequired(t, ex)
			if assert.NotNil(t, r.Error, "%s: %.300s", tc.name, ex.body) {
				assert.Equal(t, -32602, r.Error.Code, tc.name)
				assert.Contains(t, r.Error.Message, "the arguments exceed", tc.name)
			}
		}
		after, peak := memory(t, pid)
		t.Logf("funchost RSS: %s before, %s after %d %s with 240,000 arguments (3.7 MB) at once (peak so far %s)", mib(before), mib(after), tc.n, tc.name, mib(peak))
		assert.Less(t, peak, int64(384<<20), tc.name)
	}
}

// TestLimitsRequestStateOwnedAndSingleUse (finding 8): client A's
// requestState replayed by client B ran the tool for B with A's answers,
// and the same state sent twice booked twice. Now a state opens only for
// the client it was given to, and once. The app asks for no tokens, so a
// client is its address (another key sent to it is no other client).
func TestLimitsRequestStateOwnedAndSingleUse(t *testing.T) {
	h := startHost(t, sample(t))
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	alice, mallory := map[string]string{"X-Functions-Key": "alice"}, map[string]string{"X-Functions-Key": "mallory"}
	const malloryFrom = "127.0.0.2"
	ex, err := bookDaysOff(ctx, h.endpoint, 1, bookArgs(""), "", alice)
	require.NoError(t, err)
	state := readInputRequired(t, ex).Result.RequestState
	require.NotEmpty(t, state, "%s", ex.body)
	answer := `,"inputResponses":{"confirm_days_off":{"action":"accept","content":{"confirm":true}}},"requestState":"` + state + `"`

	ex, err = bookDaysOffFrom(ctx, malloryFrom, h.endpoint, 2, bookArgs(""), answer, mallory)
	require.NoError(t, err)
	r := readInputRequired(t, ex)
	require.NotNil(t, r.Error, "%s", ex.body)
	assert.Contains(t, r.Error.Message, "given to another client")

	ex, err = bookDaysOff(ctx, h.endpoint, 3, bookArgs(""), answer, alice)
	require.NoError(t, err)
	assert.Equal(t, "booked", structured(t, ex.body)["status"], "%s", ex.body)

	ex, err = bookDaysOff(ctx, h.endpoint, 4, bookArgs(""), answer, alice)
	require.NoError(t, err)
	r = readInputRequired(t, ex)
	require.NotNil(t, r.Error, "%s", ex.body)
	assert.Contains(t, r.Error.Message, "used already", "a replay books nothing")
	const booked = "Executed 'Functions.book_days_off' (Succeeded)"
	require.Eventually(t, func() bool { return strings.Contains(h.console.String(), booked) }, clientTimeout, 10*time.Millisecond, "%s", h.console.String())
	assert.Equal(t, 1, strings.Count(h.console.String(), booked), "booked once")
}

// openCall POSTs a tools/call on a 2025-11-25 session and returns its
// response stream once the headers are in.
func openCall(ctx context.Context, url, session, body string) (*testutil.SSEStream, error) {
	return openCallWith(ctx, http.DefaultClient, url, session, body)
}

// openCallWith is openCall through client.
func openCallWith(ctx context.Context, client *http.Client, url, session, body string) (*testutil.SSEStream, error) {
	ctx, cancel := context.WithCancel(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	resp, err := client.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		cancel()
		return nil, &statusError{status: resp.StatusCode, msg: fmt.Sprintf("POST: %s: %s", resp.Status, strings.TrimSpace(string(msg)))}
	}
	return testutil.ReadSSE(resp, cancel), nil
}

// statusError is an HTTP answer other than 200.
type statusError struct {
	status int
	msg    string
}

func (e *statusError) Error() string { return e.msg }

// TestLimitsResumableStreamsLeftBehind (finding 5): on a 2025-11-25
// session, calls of primes to 1,000,000 (a 1.08 MB result) whose client
// closed the stream at once kept their result whole for a minute: 50 a
// second took funchost to 1,500 MB. Now a stream keeps at most 1 MiB (the
// result included) within budgets per client and in all, and a result that
// does not fit is not kept: a second round of such calls reuses the memory
// of the first instead of adding to it. (Resuming such a stream is the
// unit tests' business: here the client may be too slow to leave.)
func TestLimitsResumableStreamsLeftBehind(t *testing.T) {
	h := startHost(t, sample(t))
	pid := h.cmd.Process.Pid
	init := mustSend(t, h.endpoint, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},`+
		`"clientInfo":{"name":"t","version":"1"}}}`, map[string]string{"Accept": "application/json"})
	session := init.header.Get("Mcp-Session-Id")
	require.NotEmpty(t, session, "%s", init.body)
	ctx, cancel := context.WithTimeout(t.Context(), 4*clientTimeout)
	defer cancel()
	n := 150
	if v, err := strconv.Atoi(os.Getenv("FUNCMCP_TEST_RESUME_CALLS")); err == nil && v > 0 {
		n = v // the finding's load: 1500 (50 a second for 30 s)
	}
	// One round: n calls, 50 a second, each left once its headers are in.
	round := func(r int) int64 {
		ticker := time.NewTicker(20 * time.Millisecond)
		defer ticker.Stop()
		var wg sync.WaitGroup
		errs := make(chan error, n)
		for i := range n {
			<-ticker.C
			wg.Go(func() {
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"primes","arguments":{"to":1000000}}}`, i)
				st, err := openCall(ctx, h.endpoint, session, body)
				if err != nil {
					errs <- err
					return
				}
				st.Close()
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		require.Eventually(t, func() bool {
			return strings.Count(h.console.String(), "Executed 'Functions.primes'") >= r*n
		}, 4*clientTimeout, 50*time.Millisecond, "every call ended")
		rss, _ := memory(t, pid)
		return rss
	}
	before, _ := memory(t, pid)
	first := round(1)
	second := round(2)
	_, peak := memory(t, pid)
	t.Logf("funchost RSS: %s before, %s after %d calls of primes to 1,000,000 left at once (50 a second), %s after %d more (peak %s)",
		mib(before), mib(first), n, mib(second), n, mib(peak))
	// What a round costs while it runs (worker replies read, checked and
	// encoded) comes and goes; what was kept stays and adds up.
	assert.Less(t, second-first, int64(64<<20), "the results of the first round are not kept")
	assert.Less(t, peak, int64(512<<20))
}

// resumeLoadBudget is the most funchost's resident memory may reach
// under TestLimitsResumableStreamsFullLoad: the bytes resumable streams
// keep in all (mcp.DefaultResumeBytes, 256 MiB) plus the calls in flight
// of one address, at most one a connection (128, the default
// MaxConnectionsPerAddress), each holding about 4 MiB while its 1.08 MB
// result is read, checked and written.
const resumeLoadBudget = 768 << 20

// TestLimitsResumableStreamsFullLoad (finding 5, its full load): on a
// 2025-11-25 session, calls of primes to 1,000,000 (a 1.08 MB result)
// whose client closes the stream at once, 50 a second for 30 s: 1,500
// calls. funchost's resident memory, read from /proc every 100 ms while
// they run and once every call has ended, stays within resumeLoadBudget;
// before the streams had bounds it reached 1,500 MB and held it for the
// minute a stream is kept. -short skips it (30 s of load).
func TestLimitsResumableStreamsFullLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("30 s of load")
	}
	const rate, seconds = 50, 30
	n := rate * seconds
	h := startHost(t, sample(t))
	pid := h.cmd.Process.Pid
	init := mustSend(t, h.endpoint, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},`+
		`"clientInfo":{"name":"t","version":"1"}}}`, map[string]string{"Accept": "application/json"})
	session := init.header.Get("Mcp-Session-Id")
	require.NotEmpty(t, session, "%s", init.body)
	before, _ := memory(t, pid)

	// The sampler keeps the highest VmRSS it read; VmHWM is the kernel's
	// own peak, read at the end.
	var highest atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if rss, _, err := readMemory(pid); err == nil && rss > highest.Load() {
				highest.Store(rss)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()

	ctx, cancel := context.WithTimeout(t.Context(), 2*seconds*time.Second+4*clientTimeout)
	defer cancel()
	// A connection per call, closed with it, as the client left.
	oneShot := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	start := time.Now()
	ticker := time.NewTicker(time.Second / rate)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	var refused, closed atomic.Int64
	var refusal, closure atomic.Value
	for i := range n {
		<-ticker.C
		wg.Go(func() {
			body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"primes","arguments":{"to":1000000}}}`, i)
			st, err := openCallWith(ctx, oneShot, h.endpoint, session, body)
			se, is503 := errors.AsType[*statusError](err)
			switch {
			case is503 && se.status == http.StatusServiceUnavailable:
				// The connections of one address are bounded.
				refused.Add(1)
				refusal.Store(se.msg)
				return
			case err != nil && !is503:
				// The same refusal, answered before the request was
				// written: the client sees the connection closed.
				closed.Add(1)
				closure.Store(err.Error())
				return
			case err != nil:
				errs <- err
				return
			}
			st.Close()
		})
	}
	ticker.Stop()
	sent := time.Since(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	served := n - int(refused.Load()) - int(closed.Load())
	t.Logf("%d calls refused 503 (%v), %d closed unanswered (%v)", refused.Load(), refusal.Load(), closed.Load(), closure.Load())
	endedCalls := func() int { return strings.Count(h.console.String(), "Executed 'Functions.primes'") }
	allEnded := assert.Eventually(t, func() bool { return endedCalls() >= served }, 4*clientTimeout, 50*time.Millisecond,
		"every call ended")
	ended := time.Since(start)
	after, peak := memory(t, pid)
	t.Logf("%d of %d calls served ended", endedCalls(), served)
	close(stop)
	<-sampled
	t.Logf("funchost RSS: %s before; %d calls of primes to 1,000,000 left at once (%d served), sent in %s (%.1f a second), all ended after %s; "+
		"highest RSS sampled %s, peak (VmHWM) %s, %s once every call ended (budget %s)",
		mib(before), n, served, sent.Round(time.Millisecond), float64(n)/sent.Seconds(), ended.Round(time.Millisecond),
		mib(highest.Load()), mib(peak), mib(after), mib(resumeLoadBudget))
	if !allEnded {
		return
	}
	assert.Less(t, peak, int64(resumeLoadBudget), "peak RSS within the budget")
	assert.Less(t, after, int64(resumeLoadBudget), "RSS once every call ended within the budget")
}

// readMemory is memory for any goroutine: VmRSS and VmHWM in bytes.
func readMemory(pid int) (rss, peak int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			return 0, 0, err
		}
		if name == "VmRSS" {
			rss = kb << 10
		} else {
			peak = kb << 10
		}
	}
	return rss, peak, nil
}
