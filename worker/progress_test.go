package worker

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/funcmcp/funcmcp/metadata"
)

// fakeChannel is the host end of the notification channel: it records what
// the worker sends and answers with status.
type fakeChannel struct {
	srv    *httptest.Server
	mu     sync.Mutex
	auth   []string
	bodies []string
	status int
}

func newFakeChannel(t *testing.T) *fakeChannel {
	t.Helper()
	fc := &fakeChannel{status: http.StatusNoContent}
	fc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		fc.mu.Lock()
		fc.auth = append(fc.auth, r.Header.Get("Authorization"))
		fc.bodies = append(fc.bodies, string(data))
		status := fc.status
		fc.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(fc.srv.Close)
	return fc
}

func (fc *fakeChannel) got() (auth, bodies []string) {
	fc.mu.Lock()
	defer fc.mu.Unlock()
	return append([]string(nil), fc.auth...), append([]string(nil), fc.bodies...)
}

// invokeWith posts an invocation of fn with the given extra headers.
func invokeWith(t *testing.T, url, fn string, headers map[string]string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/"+fn, strings.NewReader(body(t, `{"name":"`+fn+`","arguments":{}}`, 1)))
	requireNoError(t, err, "request")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	requireNoError(t, err, "POST")
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("invocation answered %d: %s", res.StatusCode, data)
	}
	return reply{status: res.StatusCode, body: string(data)}
}

// notifyingApp has one tool, "work", that reports progress and logs at
// three levels, and records whether it could notify.
func notifyingApp(notifies *bool) *App {
	a := New(&Options{Stdout: io.Discard, Stderr: io.Discard})
	a.ConfigureMcpTool("work").Handle(func(_ context.Context, tc *ToolContext) (*Result, error) {
		*notifies = tc.Notifies()
		tc.ClientLogf(LevelDebug, "starting %d", 1)
		tc.Progress(1, 2, "first half")
		tc.ClientLog(LevelWarning, "half ", "way")
		tc.Progress(2, 0, "")
		tc.ClientLog(LevelError, "done")
		tc.ClientLog(LogLevel("loud"), "not a level")
		return TextResult("ok"), nil
	})
	return a
}

// serveNotifyingApp serves notifyingApp; *notifies tells what the last
// call's Notifies() said.
func serveNotifyingApp(t *testing.T) (srv *httptest.Server, notifies *bool) {
	t.Helper()
	notifies = new(bool)
	srv = httptest.NewServer(notifyingApp(notifies).Handler())
	t.Cleanup(srv.Close)
	return srv, notifies
}

func TestToolNotificationsReachTheHostChannel(t *testing.T) {
	fc := newFakeChannel(t)
	srv, notifies := serveNotifyingApp(t)

	invokeWith(t, srv.URL, "work", map[string]string{
		metadata.HeaderNotifyURL:      fc.srv.URL + "/invocations/1/notifications",
		metadata.HeaderNotifyToken:    "secret",
		metadata.HeaderNotifyProgress: "true",
		metadata.HeaderNotifyLogLevel: "info",
	})
	if !*notifies {
		t.Error("Notifies() = false with a channel offered")
	}
	auth, bodies := fc.got()
	want := []string{
		`{"type":"progress","progress":1,"total":2,"message":"first half"}`,
		`{"type":"log","level":"warning","logger":"work","data":"half way"}`,
		`{"type":"progress","progress":2}`,
		`{"type":"log","level":"error","logger":"work","data":"done"}`,
	}
	if len(bodies) != len(want) {
		t.Fatalf("got %d notifications, want %d (debug is below info, \"loud\" is no level):\n%s", len(bodies), len(want), strings.Join(bodies, "\n"))
	}
	for i := range want {
		assertJSONEq(t, want[i], bodies[i], "notification")
		if auth[i] != "Bearer secret" {
			t.Errorf("Authorization = %q, want the offered token", auth[i])
		}
	}
}

func TestToolNotificationsOnlyWhatTheClientAskedFor(t *testing.T) {
	fc := newFakeChannel(t)
	srv, _ := serveNotifyingApp(t)

	invokeWith(t, srv.URL, "work", map[string]string{
		metadata.HeaderNotifyURL:      fc.srv.URL + "/n",
		metadata.HeaderNotifyToken:    "secret",
		metadata.HeaderNotifyLogLevel: "error",
	})
	_, bodies := fc.got()
	if len(bodies) != 1 {
		t.Fatalf("got %d notifications, want only the error log (no progress asked for):\n%s", len(bodies), strings.Join(bodies, "\n"))
	}
	assertJSONEq(t, `{"type":"log","level":"error","logger":"work","data":"done"}`, bodies[0], "notification")
}

func TestToolNotificationsStopWhenTheChannelIsGone(t *testing.T) {
	fc := newFakeChannel(t)
	fc.status = http.StatusNotFound // the call ended on the host side
	srv, _ := serveNotifyingApp(t)

	r := invokeWith(t, srv.URL, "work", map[string]string{
		metadata.HeaderNotifyURL:      fc.srv.URL + "/n",
		metadata.HeaderNotifyToken:    "secret",
		metadata.HeaderNotifyProgress: "true",
		metadata.HeaderNotifyLogLevel: "debug",
	})
	if _, bodies := fc.got(); len(bodies) != 1 {
		t.Errorf("got %d notification requests, want 1: the first 404 stops the rest", len(bodies))
	}
	if !strings.Contains(r.body, `ok`) {
		t.Errorf("the tool result is unaffected by a failed channel: %s", r.body)
	}
}

func TestNoChannelIsAQuietNoOp(t *testing.T) {
	fc := newFakeChannel(t)
	tests := []struct {
		name    string
		headers map[string]string
	}{
		{"the real Azure Functions host sends no channel", nil},
		{"no token", map[string]string{metadata.HeaderNotifyURL: fc.srv.URL, metadata.HeaderNotifyProgress: "true"}},
		{"not loopback", map[string]string{metadata.HeaderNotifyURL: "http://192.0.2.1/n", metadata.HeaderNotifyToken: "t", metadata.HeaderNotifyProgress: "true"}},
		{"not http", map[string]string{metadata.HeaderNotifyURL: strings.Replace(fc.srv.URL, "http:", "https:", 1), metadata.HeaderNotifyToken: "t", metadata.HeaderNotifyProgress: "true"}},
		{"nothing asked for", map[string]string{metadata.HeaderNotifyURL: fc.srv.URL, metadata.HeaderNotifyToken: "t"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, notifies := serveNotifyingApp(t)
			*notifies = true
			invokeWith(t, srv.URL, "work", tt.headers)
			if *notifies {
				t.Error("Notifies() = true without a usable channel")
			}
		})
	}
	if _, bodies := fc.got(); len(bodies) != 0 {
		t.Errorf("the channel received %d requests, want none", len(bodies))
	}
}

func TestNewNotifierReadsTheOffer(t *testing.T) {
	h := http.Header{}
	h.Set(metadata.HeaderNotifyURL, "http://[::1]:9/invocations/a/notifications")
	h.Set(metadata.HeaderNotifyToken, "tok")
	h.Set(metadata.HeaderNotifyLogLevel, "warning")
	n := newNotifier(context.Background(), h)
	if n == nil {
		t.Fatal("no notifier for a loopback IPv6 offer")
	}
	if n.progress || n.minLevel != 3 || n.auth != "Bearer tok" {
		t.Errorf("notifier = {progress %v, minLevel %d, auth %q}, want {false, 3, Bearer tok}", n.progress, n.minLevel, n.auth)
	}
	var nt metadata.Notification
	data, _ := json.Marshal(metadata.Notification{Type: metadata.NotificationLog, Level: "info", Data: json.RawMessage(`"x"`)})
	requireNoError(t, json.Unmarshal(data, &nt), "round trip")
	if nt.Progress != nil {
		t.Error("a log notification carries no progress")
	}
}

// TestNotificationsStopWithTheInvocation: once the invocation's context is
// done (the host dropped the call), Progress and ClientLog send nothing
// instead of waiting on a channel no one reads.
func TestNotificationsStopWithTheInvocation(t *testing.T) {
	fc := newFakeChannel(t)
	h := http.Header{}
	h.Set(metadata.HeaderNotifyURL, fc.srv.URL+"/n")
	h.Set(metadata.HeaderNotifyToken, "tok")
	h.Set(metadata.HeaderNotifyProgress, "true")
	h.Set(metadata.HeaderNotifyLogLevel, "debug")
	ctx, cancel := context.WithCancel(context.Background())
	tc := &ToolContext{Name: "t", notify: newNotifier(ctx, h)}
	if !tc.Notifies() {
		t.Fatal("no notifier for a loopback offer")
	}
	tc.Progress(1, 3, "one")
	cancel()
	tc.Progress(2, 3, "two")
	tc.ClientLogf(LevelInfo, "after %s", "cancel")
	if _, bodies := fc.got(); len(bodies) != 1 || !strings.Contains(bodies[0], `"one"`) {
		t.Errorf("the channel received %q, want only the progress sent before the cancel", bodies)
	}
}
