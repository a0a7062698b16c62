package mcp

import (
	"encoding/base64"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// paramTools declares x-mcp-header arguments for echo.
type paramTools struct{ *fakeTools }

func (paramTools) ParamHeaders(name string) []ParamHeader {
	if name != "echo" {
		return nil
	}
	return []ParamHeader{
		{Name: "Region", Path: []string{"region"}},
		{Name: "Priority", Path: []string{"priority"}},
		{Name: "Verbose", Path: []string{"verbose"}},
		{Name: "Zone", Path: []string{"where", "zone"}},
	}
}

func TestParamHeaders(t *testing.T) {
	tools := newFakeTools()
	srv := httptest.NewServer(NewHandler(serverOf(paramTools{tools}), &Options{Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(srv.Close)
	s := &testServer{Server: srv, tools: tools}
	b64 := func(v string) string { return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(v)) + "?=" }
	call := func(args map[string]any) string {
		args["text"] = "x"
		return rpc(1, methodToolsCall, map[string]any{"name": "echo", "arguments": args, "_meta": modernMeta(ModernVersion)})
	}
	headers := func(params map[string]string) map[string]string {
		h := modernHeaders(methodToolsCall, "echo")
		for k, v := range params {
			h["Mcp-Param-"+k] = v
		}
		return h
	}
	full := map[string]any{"region": "us-west1", "priority": 42, "verbose": true, "where": map[string]any{"zone": "b"}}
	fullHeaders := map[string]string{"Region": "us-west1", "Priority": "42", "Verbose": "true", "Zone": "b"}
	with := func(k, v string) map[string]string {
		out := map[string]string{}
		for kk, vv := range fullHeaders {
			out[kk] = vv
		}
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
		return out
	}
	tests := []struct {
		name    string
		args    map[string]any
		params  map[string]string
		problem string // "" = accepted
	}{
		{"all match", full, fullHeaders, ""},
		{"numbers compare numerically", full, with("Priority", "42.0"), ""},
		{"base64 string", map[string]any{"region": "Hello, 世界"}, map[string]string{"Region": b64("Hello, 世界")}, ""},
		{"literal without the suffix", map[string]any{"region": "=?base64?SGVsbG8="}, map[string]string{"Region": "=?base64?SGVsbG8="}, ""},
		{"null and absent need no header", map[string]any{"verbose": nil}, map[string]string{}, ""},
		{"missing", full, with("Region", ""), "Header mismatch: the Mcp-Param-Region header is required: argument 'region' is in the body."},
		{"missing nested", full, with("Zone", ""), "Header mismatch: the Mcp-Param-Zone header is required: argument 'where.zone' is in the body."},
		{"string differs", full, with("Region", "eu-north1"), `Header mismatch: Mcp-Param-Region header value 'eu-north1' does not match body value "us-west1"`},
		{"number differs", full, with("Priority", "43"), "Header mismatch: Mcp-Param-Priority header value '43' does not match body value 42"},
		{"boolean differs", full, with("Verbose", "True"), "Header mismatch: Mcp-Param-Verbose header value 'True' does not match body value true"},
		{"base64 without padding", map[string]any{"region": "Hello"}, map[string]string{"Region": "=?base64?SGVsbG8?="}, "Header mismatch: the Mcp-Param-Region header value is not valid base64 in its =?base64?…?= form."},
		{"base64 with other characters", map[string]any{"region": "Hello"}, map[string]string{"Region": "=?base64?SGVs!!!bG8=?="}, "Header mismatch: the Mcp-Param-Region header value is not valid base64 in its =?base64?…?= form."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.post(t, call(tt.args), headers(tt.params))
			if tt.problem == "" {
				assert.Equal(t, http.StatusOK, r.status, r.body)
				return
			}
			assert.Equal(t, http.StatusBadRequest, r.status)
			assert.JSONEq(t, errorBody("1", CodeHeaderMismatch, tt.problem), r.body)
		})
	}

	t.Run("legacy requests are not checked", func(t *testing.T) {
		r := s.post(t, rpc(2, methodToolsCall, map[string]any{"name": "echo", "arguments": map[string]any{"text": "x", "region": "a"}}), nil)
		require.Equal(t, http.StatusOK, r.status, r.body)
	})
	t.Run("other tools are not checked", func(t *testing.T) {
		r := s.post(t, rpc(3, methodToolsCall, map[string]any{"name": "add", "arguments": map[string]any{"region": "a"}, "_meta": modernMeta(ModernVersion)}), modernHeaders(methodToolsCall, "add"))
		require.Equal(t, http.StatusOK, r.status, r.body)
	})
}

func TestParamHeadersFromSchema(t *testing.T) {
	schema := `{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"query":{"type":"string"},
		"where":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},
		"list":{"type":"array","items":{"type":"object","properties":{"no":{"type":"string","x-mcp-header":"No"}}}},
		"empty":{"type":"string","x-mcp-header":""}},
		"allOf":[{"properties":{"hidden":{"type":"string","x-mcp-header":"Hidden"}}}],
		"x-mcp-header":"Root"}`
	assert.Equal(t, []ParamHeader{
		{Name: "Region", Path: []string{"region"}},
		{Name: "Zone", Path: []string{"where", "zone"}},
	}, ParamHeadersOf(json.RawMessage(schema)), "only properties reachable through properties alone")
	assert.Nil(t, ParamHeadersOf(json.RawMessage(`{"type":"object"}`)))
}
