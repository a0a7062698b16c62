package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

// fakeHost is funchost's end of the call channel: it answers each request
// notification as the suite's client would (stream mode) or keeps it for an
// input-required result, and records what it was sent.
type fakeHost struct {
	srv  *httptest.Server
	mode string
	// startTask is the status the host answers a startTask with (0: 200
	// and a task in stream mode).
	startTask int

	mu   sync.Mutex
	sent []metadata.Notification
}

func newFakeHost(t *testing.T, mode string) *fakeHost {
	t.Helper()
	h := &fakeHost{mode: mode}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		var n metadata.Notification
		data, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(data, &n); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.sent = append(h.sent, n)
		h.mu.Unlock()
		switch {
		case n.Type == metadata.NotificationStartTask && h.startTask == 0:
			_, _ = io.WriteString(w, `{"taskId":"task-1","inputMode":"stream"}`)
		case n.Type == metadata.NotificationStartTask:
			w.WriteHeader(h.startTask)
		case n.Type != metadata.NotificationRequest:
			w.WriteHeader(http.StatusNoContent)
		case h.mode == metadata.InputModeInputRequired:
			_, _ = io.WriteString(w, `{"inputRequired":true}`)
		default:
			_, _ = fmt.Fprintf(w, `{"result":%s}`, clientAnswer(n))
		}
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// take returns what the host was sent since the last take.
func (h *fakeHost) take() []metadata.Notification {
	h.mu.Lock()
	defer h.mu.Unlock()
	sent := h.sent
	h.sent = nil
	return sent
}

// elicitValues are the values the fake user enters, by property name.
var elicitValues = map[string]any{
	"name": "Alice", "color": "blue", "ok": true, "confirm": true, "context": "test context",
	"username": "testuser", "email": "test@example.com",
	"age": 25, "score": 88, "status": "inactive", "verified": false,
	"untitledSingle": "option1", "titledSingle": "value1", "legacyEnum": "opt1",
	"untitledMulti": []string{"option1", "option2"}, "titledMulti": []string{"value1", "value2"},
}

// clientAnswer is the suite client's result for a request: the user
// accepts with a value for each requested property, the model answers
// "Paris", the roots are one test root.
func clientAnswer(n metadata.Notification) string {
	switch n.Method {
	case metadata.MethodElicitationCreate:
		var p struct {
			RequestedSchema struct {
				Properties map[string]json.RawMessage `json:"properties"`
			} `json:"requestedSchema"`
		}
		_ = json.Unmarshal(n.Params, &p)
		content := map[string]any{}
		for name := range p.RequestedSchema.Properties {
			content[name] = elicitValues[name]
		}
		data, _ := json.Marshal(map[string]any{"action": "accept", "content": content})
		return string(data)
	case metadata.MethodSamplingCreate:
		return `{"role":"assistant","content":{"type":"text","text":"Paris"},"model":"test-model","stopReason":"endTurn"}`
	case metadata.MethodRootsList:
		return `{"roots":[{"uri":"file:///test/root","name":"Test Root"}]}`
	}
	return `{}`
}

// outcome is what one invocation answered.
type outcome struct {
	text    string // the first text of the tool result, or the prompt's first message
	isError bool
	failure *metadata.FailureReply // HTTP 500
}

// invoke posts one invocation of function, as funchost does, offering the
// channel of h in mode with the client's caps and the answers so far.
func invoke(t *testing.T, base, function string, args string, h *fakeHost, caps string, answers map[string]json.RawMessage, extra map[string]string) outcome {
	t.Helper()
	value, _ := json.Marshal(fmt.Sprintf(`{"name":%q,"arguments":%s}`, function, args))
	req, err := http.NewRequest(http.MethodPost, base+"/"+function, strings.NewReader(fmt.Sprintf(`{"Data":{"context":%s}}`, value)))
	require.NoError(t, err)
	req.Header.Set("Accept", metadata.MediaTypeDirectResult)
	if h != nil {
		req.Header.Set(metadata.HeaderNotifyURL, h.srv.URL+"/invocations/1/notifications")
		req.Header.Set(metadata.HeaderNotifyToken, "tok")
		req.Header.Set(metadata.HeaderInputMode, h.mode)
		req.Header.Set(metadata.HeaderClientCapabilities, metadata.EncodeHeaderJSON(json.RawMessage(caps)))
		if len(answers) > 0 {
			data, err := json.Marshal(answers)
			require.NoError(t, err)
			req.Header.Set(metadata.HeaderInputResponses, metadata.EncodeHeaderJSON(data))
		}
	}
	for k, v := range extra {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var block struct{ Text string }
	switch {
	case resp.StatusCode == http.StatusInternalServerError:
		var fr metadata.FailureReply
		require.NoError(t, json.Unmarshal(data, &fr), "%s", data)
		return outcome{failure: &fr}
	case resp.StatusCode != http.StatusOK:
		t.Fatalf("the worker answered %d: %s", resp.StatusCode, data)
	case strings.HasPrefix(resp.Header.Get("Content-Type"), metadata.MediaTypeDirectResult):
		// A prompt's direct reply is {"Logs":[…],"Result":<GetPromptResult>}.
		raw, _, err := binding.DecodeEncodedReply(data)
		require.NoError(t, err, "%s", data)
		var gpr struct {
			Messages []struct{ Content json.RawMessage } `json:"messages"`
		}
		require.NoError(t, json.Unmarshal(raw, &gpr), "%s", raw)
		if len(gpr.Messages) > 0 {
			require.NoError(t, json.Unmarshal(gpr.Messages[0].Content, &block))
			return outcome{text: block.Text}
		}
		d, _, err := binding.DecodeDirectReply(data)
		require.NoError(t, err, "%s", data)
		require.NotEmpty(t, d.Result.Content, "%s", data)
		require.NoError(t, json.Unmarshal(d.Result.Content[0], &block))
		return outcome{text: block.Text, isError: d.Result.IsError}
	}
	// A prompt: {"ReturnValue":"{\"content\":\"<GetPromptResult>\",\"type\":\"get_prompt_result\"}"}.
	var r metadata.InvocationResponse
	require.NoError(t, json.Unmarshal(data, &r), "%s", data)
	var env string
	require.NoError(t, json.Unmarshal(r.ReturnValue, &env), "%s", data)
	var pr metadata.PromptResult
	require.NoError(t, json.Unmarshal([]byte(env), &pr), env)
	var gpr struct {
		Messages []struct{ Content json.RawMessage } `json:"messages"`
	}
	require.NoError(t, json.Unmarshal([]byte(pr.Content), &gpr), pr.Content)
	require.NotEmpty(t, gpr.Messages, pr.Content)
	require.NoError(t, json.Unmarshal(gpr.Messages[0].Content, &block))
	return outcome{text: block.Text}
}

// request is one request the fixture sent the client, as the tests expect it.
type request struct{ key, method, params string }

func requestsOf(t *testing.T, sent []metadata.Notification) []request {
	t.Helper()
	out := make([]request, 0, len(sent))
	for _, n := range sent {
		require.Equal(t, metadata.NotificationRequest, n.Type)
		out = append(out, request{n.Key, n.Method, string(n.Params)})
	}
	return out
}

// assertRequests compares the requests sent with want, params as JSON.
func assertRequests(t *testing.T, want []request, got []request) {
	t.Helper()
	require.Len(t, got, len(want), "%v", got)
	for i := range want {
		assert.Equal(t, want[i].key, got[i].key)
		assert.Equal(t, want[i].method, got[i].method)
		assert.JSONEq(t, want[i].params, got[i].params, got[i].key)
	}
}

const allCaps = `{"sampling":{},"elicitation":{},"roots":{"listChanged":true}}`

// The params the suite's scenario descriptions give for each request.
const (
	nameParams     = `{"message":"What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`
	capitalParams  = `{"messages":[{"role":"user","content":{"type":"text","text":"What is the capital of France?"}}],"maxTokens":100}`
	greetingParams = `{"messages":[{"role":"user","content":{"type":"text","text":"Generate a greeting"}}],"maxTokens":50}`
	confirmParams  = `{"message":"Please confirm","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}}`
	rootsParams    = `{}`
	step1Params    = `{"message":"Step 1: What is your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}}`
	step2Params    = `{"message":"Step 2: What is your favorite color?","requestedSchema":{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}}`
	contextParams  = `{"message":"What context should the prompt use?","requestedSchema":{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}}`
)

// TestFixtureAsksTheClient runs every fixture tool and prompt that asks the
// client through the worker's handler, with a fake funchost channel: in
// stream mode (MCP before 2026-07-28) each request is answered at once; in
// input-required mode (2026-07-28) each round's requests end the run and
// the next run gets their answers, until the handler completes.
func TestFixtureAsksTheClient(t *testing.T) {
	srv := httptest.NewServer(newApp().Handler())
	t.Cleanup(srv.Close)
	tests := []struct {
		function, args, caps string
		rounds               [][]request // the requests of each round, in key order
		want                 string      // the final text
	}{
		{function: "test_sampling", args: `{"prompt":"Test prompt for sampling"}`, caps: allCaps,
			rounds: [][]request{{{"sampling-1", metadata.MethodSamplingCreate,
				`{"messages":[{"role":"user","content":{"type":"text","text":"Test prompt for sampling"}}],"maxTokens":100}`}}},
			want: "LLM response: Paris"},
		{function: "test_elicitation", args: `{"message":"Please provide your information"}`, caps: allCaps,
			rounds: [][]request{{{"elicitation-1", metadata.MethodElicitationCreate,
				`{"message":"Please provide your information","requestedSchema":{"type":"object","properties":{"username":{"type":"string","description":"User's response"},"email":{"type":"string","description":"User's email address"}},"required":["username","email"]}}`}}},
			want: `User response: action=accept, content={"email":"test@example.com","username":"testuser"}`},
		{function: "test_elicitation_sep1034_defaults", args: `{}`, caps: allCaps,
			rounds: [][]request{{{"elicitation-1", metadata.MethodElicitationCreate,
				`{"message":"Please review and update the form fields with defaults","requestedSchema":` + string(defaultsSchema) + `}`}}},
			want: `Elicitation completed: action=accept, content={"age":25,"name":"Alice","score":88,"status":"inactive","verified":false}`},
		{function: "test_elicitation_sep1330_enums", args: `{}`, caps: allCaps,
			rounds: [][]request{{{"elicitation-1", metadata.MethodElicitationCreate,
				`{"message":"Please select options from the enum fields","requestedSchema":` + string(enumsSchema) + `}`}}},
			want: `Elicitation completed: action=accept, content={"legacyEnum":"opt1","titledMulti":["value1","value2"],"titledSingle":"value1","untitledMulti":["option1","option2"],"untitledSingle":"option1"}`},
		{function: "test_missing_capability", args: `{}`, caps: `{"sampling":{}}`,
			rounds: [][]request{{{"sampling-1", metadata.MethodSamplingCreate,
				`{"messages":[{"role":"user","content":{"type":"text","text":"Say hello"}}],"maxTokens":20}`}}},
			want: "LLM response: Paris"},
		{function: "test_streaming_elicitation", args: `{}`, caps: `{"elicitation":{}}`,
			rounds: [][]request{{{"elicitation-1", metadata.MethodElicitationCreate,
				`{"message":"Please confirm to continue","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}}`}}},
			want: `Elicitation completed: action=accept, content={"ok":true}`},
		{function: "test_input_required_result_elicitation", args: `{}`, caps: allCaps,
			rounds: [][]request{{{"user_name", metadata.MethodElicitationCreate, nameParams}}},
			want:   "Hello, Alice!"},
		{function: "test_input_required_result_sampling", args: `{}`, caps: allCaps,
			rounds: [][]request{{{"capital_question", metadata.MethodSamplingCreate, capitalParams}}},
			want:   "Sampling response: Paris"},
		{function: "test_input_required_result_list_roots", args: `{}`, caps: allCaps,
			rounds: [][]request{{{"client_roots", metadata.MethodRootsList, rootsParams}}},
			want:   "Client roots: file:///test/root"},
		{function: "test_input_required_result_request_state", args: `{}`, caps: allCaps,
			rounds: [][]request{{{"confirm", metadata.MethodElicitationCreate, confirmParams}}},
			want:   "Confirmed (ok=true): state-ok, the request state was verified"},
		{function: "test_input_required_result_tampered_state", args: `{}`, caps: allCaps,
			rounds: [][]request{{{"confirm", metadata.MethodElicitationCreate, confirmParams}}},
			want:   "Confirmed (ok=true)"},
		{function: "test_input_required_result_multiple_inputs", args: `{}`, caps: allCaps,
			rounds: [][]request{{
				{"client_roots", metadata.MethodRootsList, rootsParams},
				{"greeting", metadata.MethodSamplingCreate, greetingParams},
				{"user_name", metadata.MethodElicitationCreate, nameParams},
			}},
			want: "Paris Alice (roots: file:///test/root)"},
		{function: "test_input_required_result_multi_round", args: `{}`, caps: allCaps,
			rounds: [][]request{
				{{"step1", metadata.MethodElicitationCreate, step1Params}},
				{{"step2", metadata.MethodElicitationCreate, step2Params}},
			},
			want: "Alice's favorite color is blue"},
		{function: "test_input_required_result_capabilities", args: `{}`, caps: `{"sampling":{}}`,
			rounds: [][]request{{{"capital_question", metadata.MethodSamplingCreate, capitalParams}}},
			want:   "Answered: capital_question"},
		{function: "test_input_required_result_capabilities", args: `{}`, caps: `{"elicitation":{}}`,
			rounds: [][]request{{{"user_name", metadata.MethodElicitationCreate, nameParams}}},
			want:   "Answered: user_name"},
		{function: "test_input_required_result_capabilities", args: `{}`, caps: allCaps,
			rounds: [][]request{{
				{"capital_question", metadata.MethodSamplingCreate, capitalParams},
				{"user_name", metadata.MethodElicitationCreate, nameParams},
			}},
			want: "Answered: capital_question, user_name"},
		{function: "test_input_required_result_capabilities", args: `{}`, caps: `{"roots":{}}`,
			want: "The client declared neither sampling nor elicitation: nothing to ask"},
		{function: "test_input_required_result_prompt", args: `{}`, caps: allCaps,
			rounds: [][]request{{{"user_context", metadata.MethodElicitationCreate, contextParams}}},
			want:   "Use this context: test context"},
	}
	for _, tt := range tests {
		name := tt.function
		if tt.caps != allCaps {
			name += " " + tt.caps
		}
		t.Run(name, func(t *testing.T) {
			t.Run("stream", func(t *testing.T) {
				h := newFakeHost(t, metadata.InputModeStream)
				out := invoke(t, srv.URL, tt.function, tt.args, h, tt.caps, nil, nil)
				require.Nil(t, out.failure)
				assert.False(t, out.isError, out.text)
				assert.Equal(t, tt.want, out.text)
				// The requests of one round are sent together, in any order.
				got := requestsOf(t, h.take())
				total := 0
				for _, round := range tt.rounds {
					total += len(round)
				}
				require.Len(t, got, total, "%v", got)
				var all []request
				for _, round := range tt.rounds {
					mine := got[len(all) : len(all)+len(round)]
					slices.SortFunc(mine, func(a, b request) int { return strings.Compare(a.key, b.key) })
					want := slices.SortedFunc(slices.Values(round), func(a, b request) int { return strings.Compare(a.key, b.key) })
					all = append(all, want...)
				}
				assertRequests(t, all, got)
			})
			t.Run("input-required", func(t *testing.T) {
				h := newFakeHost(t, metadata.InputModeInputRequired)
				answers := map[string]json.RawMessage{}
				for i, round := range tt.rounds {
					out := invoke(t, srv.URL, tt.function, tt.args, h, tt.caps, answers, nil)
					sent := h.take()
					assertRequests(t, round, requestsOf(t, sent))
					if out.failure == nil {
						assert.True(t, out.isError, "round %d ends input-required: %s", i+1, out.text)
					}
					for _, n := range sent {
						answers[n.Key] = json.RawMessage(clientAnswer(n))
					}
				}
				out := invoke(t, srv.URL, tt.function, tt.args, h, tt.caps, answers, nil)
				assert.Empty(t, h.take(), "the last run asks nothing")
				require.Nil(t, out.failure)
				assert.False(t, out.isError, out.text)
				assert.Equal(t, tt.want, out.text)
			})
		})
	}
}

// TestFixtureWithoutTheClientsCapability: test_missing_capability fails the
// call with -32021 naming sampling, the other tools fail the same way, and
// nothing is sent to the client.
func TestFixtureWithoutTheClientsCapability(t *testing.T) {
	srv := httptest.NewServer(newApp().Handler())
	t.Cleanup(srv.Close)
	for _, tt := range []struct{ function, args, capability string }{
		{"test_missing_capability", `{}`, "sampling"},
		{"test_sampling", `{"prompt":"p"}`, "sampling"},
		{"test_elicitation", `{"message":"m"}`, "elicitation"},
		{"test_input_required_result_list_roots", `{}`, "roots"},
		{"test_input_required_result_multiple_inputs", `{}`, "roots"}, // the first in key order: client_roots
		{"test_input_required_result_prompt", `{}`, "elicitation"},
	} {
		for _, mode := range []string{metadata.InputModeStream, metadata.InputModeInputRequired} {
			t.Run(tt.function+" "+mode, func(t *testing.T) {
				h := newFakeHost(t, mode)
				out := invoke(t, srv.URL, tt.function, tt.args, h, `{}`, nil, nil)
				require.NotNil(t, out.failure, "a failure, not a result: %q", out.text)
				assert.Equal(t, metadata.CodeMissingRequiredClientCapability, out.failure.Code)
				assert.JSONEq(t, fmt.Sprintf(`{"requiredCapabilities":{%q:{}}}`, tt.capability), string(out.failure.Data))
				assert.Empty(t, h.take())
			})
		}
	}
}

// TestFixtureReconnection: test_reconnection asks the host to close the
// response stream when it may, and completes either way.
func TestFixtureReconnection(t *testing.T) {
	srv := httptest.NewServer(newApp().Handler())
	t.Cleanup(srv.Close)
	tests := []struct {
		name      string
		channel   bool
		resumable bool
		sent      []string
	}{
		{name: "resumable", channel: true, resumable: true, sent: []string{metadata.NotificationCloseStream}},
		{name: "not resumable", channel: true},
		{name: "no channel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHost(t, metadata.InputModeStream)
			var extra map[string]string
			if tt.resumable {
				extra = map[string]string{metadata.HeaderResumable: "true"}
			}
			ch := h
			if !tt.channel {
				ch = nil
			}
			out := invoke(t, srv.URL, "test_reconnection", `{}`, ch, allCaps, nil, extra)
			require.Nil(t, out.failure)
			assert.False(t, out.isError)
			assert.Equal(t, "Reconnection test completed successfully", out.text)
			var types []string
			for _, n := range h.take() {
				types = append(types, n.Type)
			}
			assert.Equal(t, tt.sent, types)
		})
	}
}
