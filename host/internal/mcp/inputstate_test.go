package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// answersLen is the length of answers as one JSON object, as they travel.
func answersLen(t *testing.T, answers map[string]any) int {
	t.Helper()
	data, err := json.Marshal(answers)
	require.NoError(t, err)
	return len(data)
}

// keyed returns the headers of a modern tools/call of echo sent with key.
func keyed(key string) map[string]string {
	h := modernHeaders(methodToolsCall, "echo")
	h["X-Functions-Key"] = key
	return h
}

// startKeyedServer is startServer behind checkedKeys: the x-functions-key
// of a request (see keyed) names its owner, as a key the host checked does.
func startKeyedServer(t *testing.T) *testServer {
	t.Helper()
	s := startServer(t, nil)
	srv := httptest.NewServer(checkedKeys(s.Config.Handler))
	t.Cleanup(srv.Close)
	return &testServer{Server: srv, tools: s.tools, logs: s.logs}
}

func requestStateOf(t *testing.T, r reply) string {
	t.Helper()
	var env struct {
		Result inputRequiredResult `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.data), &env), r.data)
	require.Equal(t, "input_required", env.Result.ResultType, r.data)
	require.NotEmpty(t, env.Result.RequestState, r.data)
	return env.Result.RequestState
}

// TestInputStateHoldsTheDocumentedAnswers (issue 25, finding 7): the
// answers of a call may reach MaxInputResponseBytes (256 KiB, as one JSON
// object), and the state that carries them to the next round opens; past
// it the answers are refused as too large, never as an altered state. An
// answer of 2,918 characters once made a state that did not open.
func TestInputStateHoldsTheDocumentedAnswers(t *testing.T) {
	for _, over := range []int{0, 1} {
		s := startServer(t, nil)
		s.tools.call = twoStepTool
		r := s.post(t, modernCall(nil, askingCaps, nil), modernHeaders(methodToolsCall, "echo"))
		state := requestStateOf(t, r)

		answer2 := map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "hi"}, "model": "m"}
		answer1 := map[string]any{"action": "accept", "content": map[string]any{"name": ""}}
		pad := MaxInputResponseBytes + over - answersLen(t, map[string]any{"name": answer1, "model": answer2})
		answer1["content"] = map[string]any{"name": strings.Repeat("x", pad)}
		require.Equal(t, MaxInputResponseBytes+over, answersLen(t, map[string]any{"name": answer1, "model": answer2}))

		// Round 2 carries the big answer; its state holds it.
		r = s.post(t, modernCall(nil, askingCaps, map[string]any{"inputResponses": map[string]any{"name": answer1}, "requestState": state}),
			modernHeaders(methodToolsCall, "echo"))
		state = requestStateOf(t, r)
		// Round 3 adds the last answer: the answers reach the bound, or pass it by one byte.
		r = s.post(t, modernCall(nil, askingCaps, map[string]any{"inputResponses": map[string]any{"model": answer2}, "requestState": state}),
			modernHeaders(methodToolsCall, "echo"))
		require.Equal(t, http.StatusOK, r.status, r.data)
		if over == 0 {
			assert.Equal(t, `"complete"`, gjson(t, r.data, "result", "resultType"), "%.300s", r.data)
			continue
		}
		assert.Equal(t, "-32602", gjson(t, r.data, "error", "code"), "%.300s", r.data)
		assert.Equal(t, `"Invalid params: the answers of this call exceed 256 KiB."`, gjson(t, r.data, "error", "message"))
	}
}

// TestInputStateIsTheCallersAndSingleUse (issue 25, finding 8): a request
// state opens only for the client it was given to (its key, else its
// session, else its address) and only once: another client's copy and a
// replay are refused and run nothing.
func TestInputStateIsTheCallersAndSingleUse(t *testing.T) {
	s := startKeyedServer(t)
	s.tools.call = twoStepTool
	state := requestStateOf(t, s.post(t, modernCall(nil, askingCaps, nil), keyed("alice")))
	answer := map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}
	retry := modernCall(nil, askingCaps, map[string]any{"inputResponses": answer, "requestState": state})
	calls := len(s.tools.calls)

	r := s.post(t, retry, keyed("mallory"))
	assert.Equal(t, "-32602", gjson(t, r.data, "error", "code"), r.data)
	assert.Contains(t, gjson(t, r.data, "error", "message"), "given to another client")
	assert.Equal(t, calls, len(s.tools.calls), "nothing ran for another client")

	requestStateOf(t, s.post(t, retry, keyed("alice")))
	assert.Equal(t, calls+1, len(s.tools.calls))

	r = s.post(t, retry, keyed("alice"))
	assert.Equal(t, "-32602", gjson(t, r.data, "error", "code"), r.data)
	assert.Contains(t, gjson(t, r.data, "error", "message"), "was used already")
	assert.Equal(t, calls+1, len(s.tools.calls), "a replay runs nothing")
}

// sharedLedger is a StateLedger instances share in a test; fail makes it
// fail, reset loses what it holds, its epoch included.
type sharedLedger struct {
	mu     sync.Mutex
	used   map[string]bool
	epoch  string
	epochs int // epochs made
	fail   error
}

func (l *sharedLedger) Epoch(context.Context) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return "", l.fail
	}
	if l.epoch == "" {
		l.epochs++
		l.epoch = fmt.Sprintf("epoch%d", l.epochs)
	}
	return l.epoch, nil
}

func (l *sharedLedger) Spend(_ context.Context, key, epoch string, _ time.Time) (bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail != nil {
		return false, l.fail
	}
	if l.used[key] {
		return false, nil
	}
	l.used[key] = true
	if l.epoch != epoch {
		return false, ErrEpochChanged
	}
	return true, nil
}

func (l *sharedLedger) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.used, l.epoch = map[string]bool{}, ""
}

func (l *sharedLedger) setFail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.fail = err
}

// TestInputStateSingleUseAcrossInstances (issue 25, finding 8): two
// instances sharing the key and a record of used states open a state once
// between them; a record that fails refuses the state with -32603 and
// leaves it to be sent again.
func TestInputStateSingleUseAcrossInstances(t *testing.T) {
	ledger := &sharedLedger{used: map[string]bool{}}
	a, b := startServer(t, &Options{SpentStates: ledger}), startServer(t, &Options{SpentStates: ledger})
	a.tools.call, b.tools.call = twoStepTool, twoStepTool
	state := requestStateOf(t, a.post(t, modernCall(nil, askingCaps, nil), keyed("alice")))
	answer := map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}
	retry := modernCall(nil, askingCaps, map[string]any{"inputResponses": answer, "requestState": state})

	ledger.setFail(errors.New("storage unreachable"))
	r := b.post(t, retry, keyed("alice"))
	assert.Equal(t, "-32603", gjson(t, r.data, "error", "code"), r.data)
	assert.Contains(t, gjson(t, r.data, "error", "message"), "could not be checked")
	assert.Empty(t, b.tools.calls, "nothing ran")
	assert.Contains(t, b.logs.String(), "storage unreachable")
	ledger.setFail(nil)

	requestStateOf(t, b.post(t, retry, keyed("alice")))
	assert.Len(t, b.tools.calls, 1, "the state opened once the record answered")
	calls := len(a.tools.calls)
	r = a.post(t, retry, keyed("alice"))
	assert.Equal(t, "-32602", gjson(t, r.data, "error", "code"), r.data)
	assert.Contains(t, gjson(t, r.data, "error", "message"), "was used already")
	assert.Equal(t, calls, len(a.tools.calls), "the other instance runs nothing")
}

// TestInputStateSingleUseAfterLedgerReset (issue 41, item 3): a state
// used on one instance is refused on another after the shared record lost
// what it held (its epoch with it), instead of opening a second time; the
// instance that gave the state reads the new epoch once a Spend found it
// changed, so that its next states open.
func TestInputStateSingleUseAfterLedgerReset(t *testing.T) {
	ledger := &sharedLedger{used: map[string]bool{}}
	a, b := startServer(t, &Options{SpentStates: ledger}), startServer(t, &Options{SpentStates: ledger})
	a.tools.call, b.tools.call = twoStepTool, twoStepTool
	answer := map[string]any{"name": map[string]any{"action": "accept", "content": map[string]any{"name": "Ada"}}}
	state := requestStateOf(t, a.post(t, modernCall(nil, askingCaps, nil), keyed("alice")))
	retry := modernCall(nil, askingCaps, map[string]any{"inputResponses": answer, "requestState": state})
	requestStateOf(t, b.post(t, retry, keyed("alice")))
	require.Len(t, b.tools.calls, 1)

	ledger.reset()
	c := startServer(t, &Options{SpentStates: ledger})
	c.tools.call = twoStepTool
	r := c.post(t, retry, keyed("alice"))
	assert.Equal(t, "-32602", gjson(t, r.data, "error", "code"), r.data)
	assert.Contains(t, gjson(t, r.data, "error", "message"), "record of used states was reset")
	assert.Empty(t, c.tools.calls, "the state used before the reset runs nothing")

	// a read the old epoch within epochRefresh: its next state carries it
	// and is refused too. Once a reads the record again, its states open.
	state = requestStateOf(t, a.post(t, modernCall(nil, askingCaps, nil), keyed("alice")))
	r = b.post(t, modernCall(nil, askingCaps, map[string]any{"inputResponses": answer, "requestState": state}), keyed("alice"))
	assert.Contains(t, gjson(t, r.data, "error", "message"), "record of used states was reset", r.data)
	for _, s := range []*testServer{a, b, c} {
		s.Config.Handler.(*Handler).h.states.SetEpochRefresh(0)
	}
	state = requestStateOf(t, a.post(t, modernCall(nil, askingCaps, nil), keyed("alice")))
	calls := len(c.tools.calls)
	requestStateOf(t, c.post(t, modernCall(nil, askingCaps, map[string]any{"inputResponses": answer, "requestState": state}), keyed("alice")))
	assert.Equal(t, calls+1, len(c.tools.calls), "a state of the new epoch opens")

	// A record that does not answer as a state is given: the epoch read
	// last serves; an instance that read none answers -32603.
	ledger.setFail(errors.New("storage unreachable"))
	requestStateOf(t, a.post(t, modernCall(nil, askingCaps, nil), keyed("alice")))
	d := startServer(t, &Options{SpentStates: ledger})
	d.tools.call = twoStepTool
	r = d.post(t, modernCall(nil, askingCaps, nil), keyed("alice"))
	assert.Equal(t, "-32603", gjson(t, r.data, "error", "code"), r.data)
	assert.Contains(t, d.logs.String(), "storage unreachable")
}
