package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

func TestPlanDaysOff(t *testing.T) {
	tests := []struct {
		name    string
		in      BookDaysOffInput
		want    DaysOffBooking
		wantErr string
	}{
		{name: "over the new year", in: BookDaysOffInput{Country: "gb", From: "2026-12-21", To: "2027-01-03"},
			want: DaysOffBooking{Country: "GB", From: "2026-12-21", To: "2027-01-03", LeaveDays: 8,
				Holidays: []string{"2026-12-25 Christmas Day", "2026-12-26 Boxing Day", "2027-01-01 New Year's Day"}}},
		{name: "one weekday", in: BookDaysOffInput{Country: "NO", From: "2026-05-18", To: "2026-05-18"},
			want: DaysOffBooking{Country: "NO", From: "2026-05-18", To: "2026-05-18", LeaveDays: 1, Holidays: []string{}}},
		{name: "a weekend and a holiday", in: BookDaysOffInput{Country: "US", From: "2026-07-03", To: "2026-07-05"},
			want: DaysOffBooking{Country: "US", From: "2026-07-03", To: "2026-07-05", LeaveDays: 1, Holidays: []string{"2026-07-04 Independence Day"}}},
		{name: "not a date", in: BookDaysOffInput{Country: "US", From: "soon", To: "2026-07-05"}, wantErr: "from and to must be dates"},
		{name: "backwards", in: BookDaysOffInput{Country: "US", From: "2026-07-05", To: "2026-07-01"}, wantErr: "the period must run forwards, 60 days at most"},
		{name: "too long", in: BookDaysOffInput{Country: "US", From: "2026-01-01", To: "2026-03-02"}, wantErr: "60 days at most"},
		{name: "sixty days", in: BookDaysOffInput{Country: "US", From: "2026-01-01", To: "2026-03-01"},
			want: DaysOffBooking{Country: "US", From: "2026-01-01", To: "2026-03-01", LeaveDays: 39,
				Holidays: []string{"2026-01-01 New Year's Day", "2026-01-19 Martin Luther King Jr. Day", "2026-02-16 Washington's Birthday"}}},
		{name: "unknown country", in: BookDaysOffInput{Country: "SE", From: "2026-07-01", To: "2026-07-05"}, wantErr: `country "SE" is not supported`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := planDaysOff(tt.in)
			if tt.wantErr != "" {
				assert.ErrorContains(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestLongestBreak(t *testing.T) {
	tests := []struct {
		country string
		year    int
		want    LongBreak
	}{
		{"NO", 2026, LongBreak{From: "2026-04-02", To: "2026-04-06", Days: 5, Holidays: []string{"Maundy Thursday", "Good Friday", "Easter Sunday", "Easter Monday"}}},
		{"GB", 2026, LongBreak{From: "2026-04-03", To: "2026-04-06", Days: 4, Holidays: []string{"Good Friday", "Easter Monday"}}},
		{"US", 2026, LongBreak{From: "2026-01-17", To: "2026-01-19", Days: 3, Holidays: []string{"Martin Luther King Jr. Day"}}},
	}
	for _, tt := range tests {
		t.Run(tt.country, func(t *testing.T) {
			got, err := longestBreak(tt.country, tt.year)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	_, err := longestBreak("GB", 1800)
	assert.ErrorContains(t, err, "between 1900 and 2199")
}

// sampleHost is funchost's end of the call channel for the sample's asking
// tools: answer gives the client's reply to each request notification.
type sampleHost struct {
	srv    *httptest.Server
	mode   string
	answer func(n metadata.Notification) string // the RequestReply body

	mu   sync.Mutex
	sent []metadata.Notification
}

func newSampleHost(t *testing.T, mode string, answer func(metadata.Notification) string) *sampleHost {
	t.Helper()
	h := &sampleHost{mode: mode, answer: answer}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n metadata.Notification
		data, _ := io.ReadAll(r.Body)
		if r.Header.Get("Authorization") != "Bearer tok" || json.Unmarshal(data, &n) != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		h.mu.Lock()
		h.sent = append(h.sent, n)
		h.mu.Unlock()
		if h.mode == metadata.InputModeInputRequired {
			_, _ = io.WriteString(w, `{"inputRequired":true}`)
			return
		}
		_, _ = io.WriteString(w, h.answer(n))
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *sampleHost) take() []metadata.Notification {
	h.mu.Lock()
	defer h.mu.Unlock()
	sent := h.sent
	h.sent = nil
	return sent
}

// callSample invokes a sample tool as funchost does, offering h's channel
// (none when h is nil) with the client's caps and the answers so far, and
// returns the result.
func callSample(t *testing.T, base, tool, args string, h *sampleHost, caps string, answers map[string]json.RawMessage) *metadata.CallToolResult {
	t.Helper()
	value, _ := json.Marshal(fmt.Sprintf(`{"name":%q,"arguments":%s}`, tool, args))
	req, err := http.NewRequest(http.MethodPost, base+"/"+tool, strings.NewReader(fmt.Sprintf(`{"Data":{"context":%s}}`, value)))
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
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "%s", data)
	d, _, err := binding.DecodeDirectReply(data)
	require.NoError(t, err, "%s", data)
	return d.Result
}

// structured decodes a result's structuredContent into v; the result must
// not be an error.
func structured(t *testing.T, res *metadata.CallToolResult, v any) {
	t.Helper()
	require.False(t, res.IsError, "%s", res.Content)
	require.NoError(t, json.Unmarshal(res.StructuredContent, v), "%s", res.StructuredContent)
}

const (
	bookArgs       = `{"country":"GB","from":"2026-12-21","to":"2027-01-03"}`
	bookQuestion   = `Book 8 days of leave for 2026-12-21 to 2027-01-03 (United Kingdom (England and Wales bank holidays))?`
	tripArgs       = `{"country":"NO","year":2026,"interests":"hiking"}`
	modelAnswer    = `{"result":{"role":"assistant","content":{"type":"text","text":"Hike the Lofoten islands."},"model":"test-model"}}`
	userRefused    = `{"error":{"code":-1,"message":"User rejected sampling request"}}`
	elicitAndModel = `{"elicitation":{},"sampling":{}}`
)

func TestBookDaysOffAsksTheUser(t *testing.T) {
	srv := httptest.NewServer(newApp().Handler())
	t.Cleanup(srv.Close)
	reply := func(body string) func(metadata.Notification) string {
		return func(metadata.Notification) string { return body }
	}
	tests := []struct {
		name          string
		channel       bool
		caps, answer  string
		status, note  string
		asked, failed bool
	}{
		{name: "confirmed, with a note", channel: true, caps: elicitAndModel, answer: `{"result":{"action":"accept","content":{"confirm":true,"note":"Back on the 4th"}}}`,
			status: "booked", note: "Back on the 4th", asked: true},
		{name: "accepted, box not ticked", channel: true, caps: elicitAndModel, answer: `{"result":{"action":"accept","content":{"confirm":false}}}`, status: "declined", asked: true},
		{name: "declined", channel: true, caps: elicitAndModel, answer: `{"result":{"action":"decline"}}`, status: "declined", asked: true},
		{name: "dismissed", channel: true, caps: elicitAndModel, answer: `{"result":{"action":"cancel"}}`, status: "cancelled", asked: true},
		{name: "the client cannot ask the user", channel: true, caps: `{"sampling":{}}`, status: "unconfirmed"},
		{name: "no channel (the real Azure Functions host)", status: "unconfirmed"},
		{name: "the client fails", channel: true, caps: elicitAndModel, answer: `{"error":{"code":-32603,"message":"no one to ask"}}`, asked: true, failed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newSampleHost(t, metadata.InputModeStream, reply(tt.answer))
			ch := h
			if !tt.channel {
				ch = nil
			}
			res := callSample(t, srv.URL, "book_days_off", bookArgs, ch, tt.caps, nil)
			sent := h.take()
			if tt.asked {
				require.Len(t, sent, 1)
				assert.Equal(t, "confirm_days_off", sent[0].Key)
				assert.Equal(t, metadata.MethodElicitationCreate, sent[0].Method)
				assert.JSONEq(t, fmt.Sprintf(`{"message":%q,"requestedSchema":%s}`, bookQuestion, confirmDaysOffSchema), string(sent[0].Params))
			} else {
				assert.Empty(t, sent)
			}
			if tt.failed {
				assert.True(t, res.IsError)
				assert.Contains(t, string(res.Content[0]), "the MCP client answered -32603: no one to ask")
				return
			}
			var b DaysOffBooking
			structured(t, res, &b)
			assert.Equal(t, tt.status, b.Status)
			assert.Equal(t, tt.note, b.Note)
			assert.Equal(t, 8, b.LeaveDays)
			if tt.status == "unconfirmed" {
				assert.Contains(t, b.Message, bookQuestion)
			}
		})
	}

	t.Run("input-required: asked, then run again with the answer", func(t *testing.T) {
		h := newSampleHost(t, metadata.InputModeInputRequired, nil)
		res := callSample(t, srv.URL, "book_days_off", bookArgs, h, elicitAndModel, nil)
		assert.True(t, res.IsError, "the first run ends input-required")
		sent := h.take()
		require.Len(t, sent, 1)
		assert.Equal(t, "confirm_days_off", sent[0].Key)
		res = callSample(t, srv.URL, "book_days_off", bookArgs, h, elicitAndModel,
			map[string]json.RawMessage{"confirm_days_off": json.RawMessage(`{"action":"accept","content":{"confirm":true}}`)})
		assert.Empty(t, h.take(), "the answer is not asked for again")
		var b DaysOffBooking
		structured(t, res, &b)
		assert.Equal(t, "booked", b.Status)
		assert.Equal(t, "Booked 8 days of leave.", b.Message)
	})
}

func TestSuggestTripAsksTheModel(t *testing.T) {
	srv := httptest.NewServer(newApp().Handler())
	t.Cleanup(srv.Close)
	wantBreak := LongBreak{From: "2026-04-02", To: "2026-04-06", Days: 5, Holidays: []string{"Maundy Thursday", "Good Friday", "Easter Sunday", "Easter Monday"}}
	tests := []struct {
		name          string
		channel       bool
		caps, answer  string
		want          TripSuggestion
		asked         bool
		noteSubstring string
	}{
		{name: "the model answers", channel: true, caps: elicitAndModel, answer: modelAnswer, asked: true,
			want: TripSuggestion{Country: "NO", Break: wantBreak, Suggestion: "Hike the Lofoten islands.", Source: "model", Model: "test-model"}},
		{name: "the client refuses", channel: true, caps: elicitAndModel, answer: userRefused, asked: true,
			noteSubstring: "the MCP client answered -1: User rejected sampling request"},
		{name: "the client has no model", channel: true, caps: `{"elicitation":{}}`,
			noteSubstring: `no "sampling" capability`},
		{name: "no channel (the real Azure Functions host)", noteSubstring: "not supported by this host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newSampleHost(t, metadata.InputModeStream, func(metadata.Notification) string { return tt.answer })
			ch := h
			if !tt.channel {
				ch = nil
			}
			res := callSample(t, srv.URL, "suggest_trip", tripArgs, ch, tt.caps, nil)
			sent := h.take()
			if tt.asked {
				require.Len(t, sent, 1)
				assert.Equal(t, "sampling-1", sent[0].Key)
				assert.Equal(t, metadata.MethodSamplingCreate, sent[0].Method)
				assert.JSONEq(t, `{"messages":[{"role":"user","content":{"type":"text","text":`+
					`"Suggest a trip within Norway for the 5 days off from 2026-04-02 to 2026-04-06 (Maundy Thursday, Good Friday, Easter Sunday, Easter Monday). The traveller enjoys hiking."}}],`+
					`"maxTokens":300,"systemPrompt":"You are a travel planner. Answer in at most three sentences."}`, string(sent[0].Params))
			} else {
				assert.Empty(t, sent)
			}
			var got TripSuggestion
			structured(t, res, &got)
			if tt.noteSubstring == "" {
				assert.Equal(t, tt.want, got)
				return
			}
			assert.Equal(t, "built-in", got.Source)
			assert.Equal(t, wantBreak, got.Break)
			assert.Contains(t, got.Note, tt.noteSubstring)
			assert.Equal(t, "Spend the 5 days from 2026-04-02 to 2026-04-06 somewhere new in Norway: enjoy hiking.", got.Suggestion)
		})
	}

	t.Run("input-required: asked, then run again with the answer", func(t *testing.T) {
		h := newSampleHost(t, metadata.InputModeInputRequired, nil)
		res := callSample(t, srv.URL, "suggest_trip", tripArgs, h, elicitAndModel, nil)
		assert.True(t, res.IsError, "the first run ends input-required")
		sent := h.take()
		require.Len(t, sent, 1)
		assert.Equal(t, "sampling-1", sent[0].Key)
		res = callSample(t, srv.URL, "suggest_trip", tripArgs, h, elicitAndModel,
			map[string]json.RawMessage{"sampling-1": json.RawMessage(`{"role":"assistant","content":{"type":"text","text":"Walk to Preikestolen."},"model":"m2"}`)})
		assert.Empty(t, h.take())
		var got TripSuggestion
		structured(t, res, &got)
		assert.Equal(t, TripSuggestion{Country: "NO", Break: wantBreak, Suggestion: "Walk to Preikestolen.", Source: "model", Model: "m2"}, got)
	})
}
