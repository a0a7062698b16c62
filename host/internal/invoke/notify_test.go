package invoke

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/mcp"
	"github.com/funcmcp/funcmcp/host/internal/peer"
	"github.com/funcmcp/funcmcp/metadata"
)

// fakeNotifier records what reaches the client; err, when set, is what
// the client's end answers.
type fakeNotifier struct {
	progress bool
	level    string
	mode     string
	caps     json.RawMessage
	answers  json.RawMessage
	// resumable: the call's stream can be closed for the client to resume.
	resumable bool
	// task: metadata.TaskStateOffered or TaskStateRunning, "" for none.
	task string
	// ask answers Request; nil means the client is never asked.
	ask func(ctx context.Context, key, method string, params json.RawMessage) (*metadata.RequestReply, error)

	mu  sync.Mutex
	got []string
	err error
}

func (f *fakeNotifier) WantsProgress() bool               { return f.progress }
func (f *fakeNotifier) LogLevel() (level string, ok bool) { return f.level, f.level != "" }

func (f *fakeNotifier) Progress(progress, total float64, message string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, "progress "+message)
	return f.err
}

func (f *fakeNotifier) Log(level, logger string, data json.RawMessage) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, "log "+level+" "+string(data))
	return f.err
}

func (f *fakeNotifier) Resumable() bool { return f.resumable }

func (f *fakeNotifier) CloseStream() error {
	if !f.resumable {
		return mcp.ErrNotResumable
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, "close stream")
	return nil
}

func (f *fakeNotifier) TaskState() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.task
}

func (f *fakeNotifier) StartTask(context.Context) (*metadata.StartTaskReply, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch f.task {
	case metadata.TaskStateOffered, metadata.TaskStateRunning:
		f.task = metadata.TaskStateRunning
		f.got = append(f.got, "start task")
		return &metadata.StartTaskReply{TaskID: "t1", InputMode: metadata.InputModeStream}, nil
	}
	return nil, mcp.ErrNoTask
}

func (f *fakeNotifier) RequestMode() string                 { return f.mode }
func (f *fakeNotifier) ClientCapabilities() json.RawMessage { return f.caps }
func (f *fakeNotifier) InputResponses() json.RawMessage     { return f.answers }

func (f *fakeNotifier) Request(ctx context.Context, key, method string, params json.RawMessage) (*metadata.RequestReply, error) {
	f.mu.Lock()
	f.got = append(f.got, "request "+key+" "+method+" "+string(params))
	f.mu.Unlock()
	return f.ask(ctx, key, method, params)
}

func (f *fakeNotifier) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.got...)
}

func (f *fakeNotifier) answer(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.err = err
}

func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// post sends one notification as the worker SDK does and returns the status.
func post(t *testing.T, target, token, body string) int {
	t.Helper()
	status, _ := postReply(t, target, token, body)
	return status
}

// postReply sends one notification and returns the status and the body.
func postReply(t *testing.T, target, token, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	data, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode, string(data)
}

func TestHubOffersAChannelOnlyWhenWanted(t *testing.T) {
	hub := NewHub(discard(), 0)
	t.Cleanup(hub.Close)
	offer, closeChannel := hub.Open("inv-1", &fakeNotifier{})
	closeChannel()
	assert.Nil(t, offer, "a client that wants nothing gets no channel")
	var none *mcp.Notifier // what a call gets when its client can receive nothing
	offer, closeChannel = hub.Open("inv-2", none)
	closeChannel()
	assert.Nil(t, offer)

	offer, closeChannel = hub.Open("inv-3", &fakeNotifier{progress: true, level: "info"})
	defer closeChannel()
	require.NotNil(t, offer)
	u, err := url.Parse(offer.header.Get(metadata.HeaderNotifyURL))
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1", u.Hostname(), "the channel listens on loopback only")
	assert.Equal(t, "/invocations/inv-3/notifications", u.Path)
	assert.Len(t, offer.header.Get(metadata.HeaderNotifyToken), 43, "32 random bytes, base64url")
	assert.Equal(t, "true", offer.header.Get(metadata.HeaderNotifyProgress))
	assert.Equal(t, "info", offer.header.Get(metadata.HeaderNotifyLogLevel))
}

// TestHubRefusesBadRequests is the table of what a worker may send wrong,
// each with the status it gets; nothing reaches the client.
func TestHubRefusesBadRequests(t *testing.T) {
	hub := NewHub(discard(), 3) // the three malformed notifications count, the limit check comes after
	t.Cleanup(hub.Close)
	client := &fakeNotifier{progress: true}
	offer, closeChannel := hub.Open("inv-1", client)
	require.NotNil(t, offer)
	target, token := offer.header.Get(metadata.HeaderNotifyURL), offer.header.Get(metadata.HeaderNotifyToken)
	same := func(s string) string { return s }
	tests := []struct {
		name   string
		target func(string) string
		token  func(string) string
		method string
		body   string
		want   int
	}{
		{"wrong token", same, func(string) string { return "guess" }, "", `{"type":"progress","progress":1}`, http.StatusUnauthorized},
		{"no such invocation", func(s string) string { return strings.Replace(s, "/invocations/", "/invocations/x", 1) }, same, "", `{"type":"progress","progress":1}`, http.StatusNotFound},
		{"not the notifications path", func(s string) string { return strings.TrimSuffix(s, "/notifications") }, same, "", `{}`, http.StatusNotFound},
		{"GET", same, same, http.MethodGet, ``, http.StatusMethodNotAllowed},
		{"not JSON", same, same, "", `progress`, http.StatusBadRequest},
		{"unknown type", same, same, "", `{"type":"tasks"}`, http.StatusBadRequest},
		{"progress without progress", same, same, "", `{"type":"progress"}`, http.StatusBadRequest},
		{"too large", same, same, "", `{"type":"log","level":"info","data":"` + strings.Repeat("x", metadata.MaxNotificationBytes) + `"}`, http.StatusRequestEntityTooLarge},
		{"over the per-call limit", same, same, "", `{"type":"progress","progress":1}`, http.StatusTooManyRequests},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.method == http.MethodGet {
				req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, target, nil)
				require.NoError(t, err)
				resp, err := http.DefaultClient.Do(req)
				require.NoError(t, err)
				resp.Body.Close()
				assert.Equal(t, tt.want, resp.StatusCode)
				return
			}
			assert.Equal(t, tt.want, post(t, tt.target(target), tt.token(token), tt.body))
		})
	}
	assert.Empty(t, client.received(), "nothing reached the client")
	closeChannel()
	assert.Equal(t, http.StatusNotFound, post(t, target, token, `{"type":"progress","progress":9}`), "the channel closes with the call")
}

// TestHubForwards: each notification reaches the client, and what the
// client's end answers decides the status the worker gets.
func TestHubForwards(t *testing.T) {
	hub := NewHub(discard(), 0)
	t.Cleanup(hub.Close)
	client := &fakeNotifier{progress: true, level: "debug"}
	offer, closeChannel := hub.Open("inv-1", client)
	defer closeChannel()
	target, token := offer.header.Get(metadata.HeaderNotifyURL), offer.header.Get(metadata.HeaderNotifyToken)
	tests := []struct {
		answer error
		want   int
	}{
		{nil, http.StatusNoContent},
		{peer.ErrNotRequested, http.StatusNoContent},
		{peer.ErrCallEnded, http.StatusNotFound},
		{peer.ErrBadLogLevel, http.StatusBadRequest},
		{peer.ErrProgressNotIncreasing, http.StatusBadRequest},
		{errors.New("broken pipe"), http.StatusBadGateway},
	}
	for _, tt := range tests {
		client.answer(tt.answer)
		assert.Equal(t, tt.want, post(t, target, token, `{"type":"log","level":"info","data":{"n":1}}`), "%v", tt.answer)
	}
	client.answer(nil)
	assert.Equal(t, http.StatusNoContent, post(t, target, token, `{"type":"progress","progress":1,"total":2,"message":"half"}`))
	got := client.received()
	assert.Len(t, got, len(tests)+1)
	assert.Equal(t, `log info {"n":1}`, got[0])
	assert.Equal(t, "progress half", got[len(got)-1])
}

func TestHubClose(t *testing.T) {
	hub := NewHub(discard(), 0)
	hub.Close() // before it ever listened
	offer, closeChannel := hub.Open("inv-1", &fakeNotifier{progress: true})
	closeChannel()
	assert.Nil(t, offer, "a closed hub offers no channel")

	hub = NewHub(discard(), 0)
	offer, closeChannel = hub.Open("inv-2", &fakeNotifier{progress: true})
	defer closeChannel()
	require.NotNil(t, offer)
	target := offer.header.Get(metadata.HeaderNotifyURL)
	hub.Close()
	hub.Close() // twice is fine
	_, err := http.Post(target, "application/json", strings.NewReader(`{}`))
	assert.Error(t, err, "the listener is closed")
}

// TestHubOffersRequests: a call that may ask its client gets a channel even
// when it wants no notification, and the offer tells the worker the mode,
// the client's capabilities and the answers so far.
func TestHubOffersRequests(t *testing.T) {
	hub := NewHub(discard(), 0)
	t.Cleanup(hub.Close)
	offer, closeChannel := hub.Open("inv-1", &fakeNotifier{mode: metadata.InputModeInputRequired,
		caps: json.RawMessage(`{"elicitation":{}}`), answers: json.RawMessage(`{"k":{"action":"accept"}}`)})
	defer closeChannel()
	require.NotNil(t, offer)
	assert.Equal(t, metadata.InputModeInputRequired, offer.header.Get(metadata.HeaderInputMode))
	var caps, answers map[string]json.RawMessage
	require.NoError(t, metadata.DecodeHeaderJSON(offer.header.Get(metadata.HeaderClientCapabilities), &caps))
	require.NoError(t, metadata.DecodeHeaderJSON(offer.header.Get(metadata.HeaderInputResponses), &answers))
	assert.Contains(t, caps, "elicitation")
	assert.JSONEq(t, `{"action":"accept"}`, string(answers["k"]))
	assert.Empty(t, offer.header.Get(metadata.HeaderNotifyProgress))
}

// TestHubRequests: a request notification is answered with what the
// client's end replies, and each failure with its status.
func TestHubRequests(t *testing.T) {
	hub := NewHub(discard(), 0)
	t.Cleanup(hub.Close)
	var answer func(ctx context.Context) (*metadata.RequestReply, error)
	client := &fakeNotifier{mode: metadata.InputModeStream, caps: json.RawMessage(`{"sampling":{}}`),
		ask: func(ctx context.Context, _, _ string, _ json.RawMessage) (*metadata.RequestReply, error) {
			return answer(ctx)
		}}
	offer, closeChannel := hub.Open("inv-1", client)
	require.NotNil(t, offer)
	target, token := offer.header.Get(metadata.HeaderNotifyURL), offer.header.Get(metadata.HeaderNotifyToken)
	const body = `{"type":"request","key":"sampling-1","method":"sampling/createMessage","params":{"maxTokens":5}}`
	tests := []struct {
		name   string
		answer func(ctx context.Context) (*metadata.RequestReply, error)
		status int
		reply  string
	}{
		{"result", func(context.Context) (*metadata.RequestReply, error) {
			return &metadata.RequestReply{Result: json.RawMessage(`{"model":"m"}`)}, nil
		}, http.StatusOK, `{"result":{"model":"m"}}`},
		{"client error", func(context.Context) (*metadata.RequestReply, error) {
			return &metadata.RequestReply{Error: &metadata.RequestError{Code: -1, Message: "no"}}, nil
		}, http.StatusOK, `{"error":{"code":-1,"message":"no"}}`},
		{"input required", func(context.Context) (*metadata.RequestReply, error) {
			return &metadata.RequestReply{InputRequired: true}, nil
		}, http.StatusOK, `{"inputRequired":true}`},
		{"no requests", func(context.Context) (*metadata.RequestReply, error) { return nil, peer.ErrNoClientRequests }, http.StatusConflict, ""},
		{"bad request", func(context.Context) (*metadata.RequestReply, error) { return nil, peer.ErrBadClientRequest }, http.StatusBadRequest, ""},
		{"call ended", func(context.Context) (*metadata.RequestReply, error) { return nil, peer.ErrCallEnded }, http.StatusNotFound, ""},
		{"stream failed", func(context.Context) (*metadata.RequestReply, error) { return nil, errors.New("broken pipe") }, http.StatusBadGateway, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			answer = tt.answer
			status, reply := postReply(t, target, token, body)
			assert.Equal(t, tt.status, status)
			if tt.reply != "" {
				assert.JSONEq(t, tt.reply, reply)
			}
		})
	}
	assert.Contains(t, client.received(), `request sampling-1 sampling/createMessage {"maxTokens":5}`)

	// A request still waiting when the invocation ends is given up.
	waiting := make(chan struct{})
	answer = func(ctx context.Context) (*metadata.RequestReply, error) {
		close(waiting)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	done := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, target, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	<-waiting
	closeChannel()
	assert.Equal(t, http.StatusNotFound, <-done, "the invocation ended while its request waited")
}

// TestHubClosesResumableStreams: a call with a resumable stream gets a
// channel that can close it; any other call's request to close is 409.
func TestHubClosesResumableStreams(t *testing.T) {
	hub := NewHub(discard(), 0)
	t.Cleanup(hub.Close)
	client := &fakeNotifier{resumable: true}
	offer, closeChannel := hub.Open("inv-1", client)
	defer closeChannel()
	require.NotNil(t, offer, "a resumable stream alone opens the channel")
	assert.Equal(t, "true", offer.header.Get(metadata.HeaderResumable))
	target, token := offer.header.Get(metadata.HeaderNotifyURL), offer.header.Get(metadata.HeaderNotifyToken)
	assert.Equal(t, http.StatusNoContent, post(t, target, token, `{"type":"closeStream"}`))
	assert.Equal(t, []string{"close stream"}, client.received())

	other := &fakeNotifier{progress: true}
	offer, closeOther := hub.Open("inv-2", other)
	defer closeOther()
	assert.Empty(t, offer.header.Get(metadata.HeaderResumable))
	assert.Equal(t, http.StatusConflict, post(t, offer.header.Get(metadata.HeaderNotifyURL), offer.header.Get(metadata.HeaderNotifyToken), `{"type":"closeStream"}`))
}

func TestHubStartsTasks(t *testing.T) {
	hub := NewHub(discard(), 0)
	t.Cleanup(hub.Close)
	client := &fakeNotifier{task: metadata.TaskStateOffered}
	offer, closeChannel := hub.Open("inv-1", client)
	defer closeChannel()
	require.NotNil(t, offer, "a task offer alone opens the channel")
	assert.Equal(t, metadata.TaskStateOffered, offer.header.Get(metadata.HeaderTask))
	target, token := offer.header.Get(metadata.HeaderNotifyURL), offer.header.Get(metadata.HeaderNotifyToken)
	status, body := postReply(t, target, token, `{"type":"startTask"}`)
	assert.Equal(t, http.StatusOK, status)
	assert.JSONEq(t, `{"taskId":"t1","inputMode":"stream"}`, body)
	assert.Equal(t, []string{"start task"}, client.received())

	running := &fakeNotifier{task: metadata.TaskStateRunning}
	offer, closeRunning := hub.Open("inv-2", running)
	defer closeRunning()
	assert.Equal(t, metadata.TaskStateRunning, offer.header.Get(metadata.HeaderTask))

	other := &fakeNotifier{progress: true}
	offer, closeOther := hub.Open("inv-3", other)
	defer closeOther()
	assert.Empty(t, offer.header.Get(metadata.HeaderTask))
	assert.Equal(t, http.StatusConflict, post(t, offer.header.Get(metadata.HeaderNotifyURL), offer.header.Get(metadata.HeaderNotifyToken), `{"type":"startTask"}`))
}
