package guard

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
	"github.com/funcmcp/funcmcp/host/internal/owner"
)

func refusal(message string) string {
	return `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"` + message + `"}}`
}

var ok = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })

// TestCheck is the table of Host and Origin headers the guard lets through
// or refuses, with the default rules (loopback only) and with allowed
// hosts and origins.
func TestCheck(t *testing.T) {
	loopback := New(nil, nil)
	configured := New([]string{" MCP.example ", "[fd00::1]", ""}, []string{"https://app.example/", ""})
	tests := []struct {
		name         string
		g            *Guard
		host, origin string
		want         int
		body         string
	}{
		{"no Origin", loopback, "127.0.0.1:7071", "", 200, ""},
		{"localhost Origin", loopback, "127.0.0.1:7071", "http://localhost:3000", 200, ""},
		{"localhost Origin, upper case", loopback, "127.0.0.1:7071", "http://LOCALHOST", 200, ""},
		{"ipv4 loopback Origin", loopback, "127.0.0.1:7071", "http://127.0.0.1:9999", 200, ""},
		{"ipv6 loopback Origin", loopback, "127.0.0.1:7071", "http://[::1]:8080", 200, ""},
		{"own loopback host over https", loopback, "127.0.0.1:7071", "https://127.0.0.1:7071", 200, ""},
		{"ipv6 loopback Host", loopback, "[::1]:7071", "", 200, ""},
		{"localhost Host without port", loopback, "localhost", "", 200, ""},
		{"foreign Origin", loopback, "127.0.0.1:7071", "http://evil.example", 403, refusal("Forbidden: Origin not allowed")},
		{"foreign Origin with the listener's port", loopback, "127.0.0.1:7071", "http://evil.example:7071", 403, ""},
		{"localhost lookalike", loopback, "127.0.0.1:7071", "http://localhost.evil.example", 403, ""},
		{"opaque Origin", loopback, "127.0.0.1:7071", "null", 403, refusal("Forbidden: Origin not allowed")},
		{"file Origin", loopback, "127.0.0.1:7071", "file://localhost", 403, ""},
		{"foreign Host", loopback, "evil.example:7071", "", 403, refusal("Forbidden: Host not allowed")},
		{"foreign Host and Origin (DNS rebinding)", loopback, "evil.example", "http://evil.example", 403, refusal("Forbidden: Host not allowed")},
		{"allowed host, any port", configured, "mcp.EXAMPLE:443", "", 200, ""},
		{"allowed ipv6 host", configured, "[fd00::1]:80", "", 200, ""},
		{"Origin on an allowed host", configured, "mcp.example", "https://mcp.example:8443", 200, ""},
		{"allowed origin", configured, "127.0.0.1", "https://app.example", 200, ""},
		{"allowed origin with a slash", configured, "127.0.0.1", "https://app.example/", 200, ""},
		{"allowed origin, other scheme", configured, "127.0.0.1", "http://app.example", 403, ""},
		{"allowed origin, other port", configured, "127.0.0.1", "https://app.example:444", 403, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/runtime/webhooks/mcp", nil)
			r.Host = tt.host
			if tt.origin != "" {
				r.Header.Set("Origin", tt.origin)
			}
			rec := httptest.NewRecorder()
			tt.g.Check(ok).ServeHTTP(rec, r)
			assert.Equal(t, tt.want, rec.Code)
			if tt.body != "" {
				assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
				assert.JSONEq(t, tt.body, rec.Body.String())
			}
		})
	}
}

func TestRequireJSON(t *testing.T) {
	tests := []struct {
		method, contentType string
		want                int
	}{
		{"POST", "application/json", 200},
		{"POST", "application/json; charset=utf-8", 200},
		{"POST", "Application/JSON", 200},
		{"POST", "text/plain", 415},
		{"POST", "application/x-www-form-urlencoded", 415},
		{"POST", "", 415},
		{"GET", "", 200},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.contentType, func(t *testing.T) {
			r := httptest.NewRequest(tt.method, "/", strings.NewReader("{}"))
			if tt.contentType != "" {
				r.Header.Set("Content-Type", tt.contentType)
			}
			rec := httptest.NewRecorder()
			RequireJSON(ok).ServeHTTP(rec, r)
			assert.Equal(t, tt.want, rec.Code)
			if tt.want == 415 {
				assert.JSONEq(t, refusal("Unsupported Media Type: the body must be application/json"), rec.Body.String())
			}
		})
	}
}

// getOn sends GET / on conn (kept alive) and returns the status.
func getOn(t *testing.T, conn net.Conn, br *bufio.Reader) int {
	t.Helper()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	_, err := io.WriteString(conn, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// serveLimited serves h on a listener of 127.0.0.1 within limits.
func serveLimited(t *testing.T, limits ConnLimits, h http.Handler) (*Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	l := LimitListener(ln, limits)
	srv := &http.Server{Handler: h, ConnState: l.ConnState}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() { _ = srv.Close() })
	return l, ln.Addr().String()
}

// dialFrom connects to addr from the loopback address from.
func dialFrom(t *testing.T, addr, from string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c, err := d.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// refusedWith reads the answer to a connection refused at once.
func refusedWith(t *testing.T, c net.Conn) string {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err, "the connection over the bound is answered at once")
	defer resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

// TestLimitListener: with no idle connection to close, a connection over
// an address's bound or the server's is answered 503 naming the limit, and
// a freed slot is taken again.
func TestLimitListener(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 8)
	busy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/busy" {
			started <- struct{}{}
			select {
			case <-release:
			case <-r.Context().Done(): // the client went away
			}
		}
		w.WriteHeader(http.StatusOK)
	})
	l, addr := serveLimited(t, ConnLimits{Global: 3, PerAddress: 2, GlobalSetting: "G", PerAddressSetting: "P"}, busy)
	defer close(release)
	var held []net.Conn
	for _, from := range []string{"127.0.0.2", "127.0.0.2", "127.0.0.3"} {
		c := dialFrom(t, addr, from)
		_, err := io.WriteString(c, "GET /busy HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		require.NoError(t, err)
		<-started
		held = append(held, c)
	}
	assert.Equal(t, int64(3), l.Open())
	assert.Equal(t, "too many open connections from this address (the limit is 2); P changes it\n", refusedWith(t, dialFrom(t, addr, "127.0.0.2")))
	assert.Equal(t, "too many open connections (the limit is 3); G changes it\n", refusedWith(t, dialFrom(t, addr, "127.0.0.4")))

	// A freed slot is taken again once the server has seen the close.
	require.NoError(t, held[0].Close())
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * time.Second}
	assert.EventuallyWithT(t, func(c *assert.CollectT) {
		resp, err := client.Get("http://" + addr + "/")
		if !assert.NoError(c, err) {
			return
		}
		resp.Body.Close()
		assert.Equal(c, http.StatusOK, resp.StatusCode)
	}, 10*time.Second, 10*time.Millisecond)
}

// TestLimitListenerClosesIdleConnections: at a bound, a new connection
// closes an idle keep-alive connection instead of being refused: its own
// address's longest idle one at the address's bound, one of the address
// holding the most at the server's.
func TestLimitListenerClosesIdleConnections(t *testing.T) {
	l, addr := serveLimited(t, ConnLimits{Global: 3, PerAddress: 2}, ok)
	idle := func(from string) (net.Conn, *bufio.Reader) {
		c := dialFrom(t, addr, from)
		br := bufio.NewReader(c)
		assert.Equal(t, http.StatusOK, getOn(t, c, br))
		return c, br
	}
	// closed reports whether the server closed c: a request on it gets no
	// answer.
	closed := func(c net.Conn, br *bufio.Reader) bool {
		require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
			return true
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return true
		}
		resp.Body.Close()
		return false
	}
	waitIdle := func(n int) {
		require.Eventually(t, func() bool { return l.Idle() == n }, 10*time.Second, time.Millisecond)
	}

	a1, a1r := idle("127.0.0.2")
	waitIdle(1)
	a2, a2r := idle("127.0.0.2")
	waitIdle(2)
	b1, b1r := idle("127.0.0.3")
	waitIdle(3)

	// The server's bound: the longest idle connection of 127.0.0.2, which
	// holds the most, makes room.
	c1, c1r := idle("127.0.0.4")
	assert.True(t, closed(a1, a1r), "the longest idle connection of the address holding the most is closed")
	waitIdle(3)

	// 127.0.0.4 at its bound of 2 closes its own idle one, not another's.
	// (127.0.0.2 and 127.0.0.3 hold one each now: the server's bound takes
	// one of them for the second connection of 127.0.0.4.)
	idle("127.0.0.4")
	waitIdle(3)
	idle("127.0.0.4")
	assert.True(t, closed(c1, c1r), "an address at its bound closes its own longest idle connection")
	assert.Equal(t, int64(3), l.Open())
	assert.True(t, closed(a2, a2r) != closed(b1, b1r), "one of the others made room for the second")
}

// TestDeadlinesLetALongCallRun: the read deadline covers reading the
// request only. Left in place, it would end the server's background read of
// the connection when it passes, and that cancels the request's context: a
// call longer than the read timeout would be cut.
func TestDeadlinesLetALongCallRun(t *testing.T) {
	const readTimeout = 50 * time.Millisecond
	for _, tt := range []struct {
		name, method string
		body         io.Reader
	}{{"no body", http.MethodGet, nil}, {"a body", http.MethodPost, strings.NewReader(`{}`)}} {
		t.Run(tt.name, func(t *testing.T) {
			got := make(chan error, 1)
			h := Deadlines(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if _, err := io.ReadAll(r.Body); err != nil {
					got <- err
					return
				}
				// A call that runs well past the read timeout (time is the subject).
				select {
				case <-r.Context().Done():
					got <- context.Cause(r.Context())
				case <-time.After(4 * readTimeout):
					got <- nil
				}
			}), readTimeout, time.Minute)
			srv := httptest.NewServer(h)
			defer srv.Close()
			req, err := http.NewRequest(tt.method, srv.URL, tt.body)
			require.NoError(t, err)
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			assert.NoError(t, <-got, "the request's context outlived the read timeout")
		})
	}
}

func TestCalls(t *testing.T) {
	c := NewCalls(2, TaskLimits{})
	r1, err := c.Admit()
	require.NoError(t, err)
	r2, err := c.Admit()
	require.NoError(t, err)
	assert.Equal(t, 2, c.InFlight())
	_, err = c.Admit()
	var busy *jsonrpc.Error
	require.True(t, errors.As(err, &busy))
	assert.Equal(t, jsonrpc.CodeServerError, busy.Code)
	assert.Equal(t, "Server busy: 2 tool calls are running, the most allowed; try again later.", busy.Message)
	var refusal *Refusal
	require.True(t, errors.As(err, &refusal))
	assert.Equal(t, ReasonBusy, refusal.Reason)
	r1()
	r3, err := c.Admit()
	require.NoError(t, err, "a released slot is free again")
	r2()
	r3()
	assert.Zero(t, c.InFlight())

	ctx, stop := c.Drainable(context.Background())
	defer stop()
	done, stopDone := c.Drainable(context.Background())
	stopDone()
	assert.NoError(t, ctx.Err())
	c.StopWaiting()
	<-ctx.Done()
	assert.ErrorIs(t, context.Cause(ctx), ErrShuttingDown)
	assert.ErrorIs(t, context.Cause(done), context.Canceled, "a call that ended is not stopped again")
	later, stopLater := c.Drainable(context.Background())
	defer stopLater()
	<-later.Done()
	assert.ErrorIs(t, context.Cause(later), ErrShuttingDown, "a call started after StopWaiting stops at once")
	assert.Equal(t, &jsonrpc.Error{Code: -32000, Message: ShuttingDownMessage}, ShuttingDown())
}

// TestAdmitTask: task work takes a slot of its owner and of all task work
// as well as a call slot; each refusal names the limit it reached, and the
// slots kept below the call limit still admit synchronous calls.
func TestAdmitTask(t *testing.T) {
	c := NewCalls(4, TaskLimits{Limit: owner.Limit{PerOwner: 2, Global: 3}, PerOwnerSetting: "PerClient", GlobalSetting: "All"})
	a1, err := c.AdmitTask("a")
	require.NoError(t, err)
	_, err = c.AdmitTask("a")
	require.NoError(t, err)
	_, err = c.AdmitTask("a")
	var busy *jsonrpc.Error
	require.True(t, errors.As(err, &busy))
	assert.Equal(t, jsonrpc.CodeServerError, busy.Code)
	assert.Equal(t, "Server busy: too many running tasks for this client (the limit is 2); PerClient changes it; try again later.", busy.Message)
	var refusal *Refusal
	require.True(t, errors.As(err, &refusal))
	assert.Equal(t, ReasonOwnerLimit, refusal.Reason)

	_, err = c.AdmitTask("b")
	require.NoError(t, err)
	_, err = c.AdmitTask("c")
	require.True(t, errors.As(err, &busy))
	assert.Equal(t, "Server busy: too many running tasks on this server (the limit is 3); All changes it; try again later.", busy.Message)
	require.True(t, errors.As(err, &refusal))
	assert.Equal(t, ReasonTaskLimit, refusal.Reason)
	assert.Equal(t, int64(3), c.TasksRunning())

	sync, err := c.Admit()
	require.NoError(t, err, "a slot stays for synchronous calls")
	_, err = c.Admit()
	require.Error(t, err, "the call limit still holds")
	sync()

	a1()
	assert.Equal(t, int64(2), c.TasksRunning())
	assert.Equal(t, 2, c.InFlight())
	_, err = c.AdmitTask("c")
	require.NoError(t, err, "a released task slot is free again")

	// A task refused by the call limit gives its task slot back.
	full := NewCalls(1, TaskLimits{Limit: owner.Limit{PerOwner: 5, Global: 5}})
	r, err := full.Admit()
	require.NoError(t, err)
	_, err = full.AdmitTask("a")
	require.True(t, errors.As(err, &busy))
	assert.Equal(t, "Server busy: 1 tool calls are running, the most allowed; try again later.", busy.Message)
	assert.Zero(t, full.TasksRunning())
	r()
}
