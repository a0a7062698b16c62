package jsonrpc

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendError(t *testing.T) {
	tests := []struct {
		name    string
		id      []byte
		code    int
		message string
		data    any
		want    string
		wantErr bool
	}{
		{"no id", nil, CodeServerError, "Forbidden: Host not allowed", nil,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Forbidden: Host not allowed"}}`, false},
		{"number id", []byte(`7`), CodeInvalidParams, "Unknown tool: 'x'", nil,
			`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"Unknown tool: 'x'"}}`, false},
		{"string id, data", []byte(`"a"`), CodeServerError, "Unsupported protocol version", map[string]any{"supported": []string{"2025-06-18"}},
			`{"jsonrpc":"2.0","id":"a","error":{"code":-32000,"message":"Unsupported protocol version","data":{"supported":["2025-06-18"]}}}`, false},
		{"no HTML escaping", nil, CodeInvalidRequest, "<a> & b", nil,
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"<a> & b"}}`, false},
		{"data that does not encode is left out", nil, CodeInternalError, "Internal error", func() {},
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error"}}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendError(nil, tt.id, tt.code, tt.message, tt.data)
			assert.Equal(t, tt.want, string(got))
			assert.True(t, json.Valid(got))
			assert.Equal(t, tt.wantErr, err != nil, "%v", err)
		})
	}
}

func TestRefuse(t *testing.T) {
	rec := httptest.NewRecorder()
	require.NoError(t, Refuse(rec, http.StatusForbidden, nil, CodeServerError, "Forbidden: Origin not allowed", nil))
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Forbidden: Origin not allowed"}}`
	assert.Equal(t, http.StatusForbidden, rec.Code)
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	assert.Equal(t, len(want), len(rec.Body.String()))
	assert.Equal(t, want, rec.Body.String())
}

func TestErrorIsReachable(t *testing.T) {
	var err error = &Error{Code: CodeInvalidParams, Message: "bad"}
	err = errors.Join(errors.New("other"), err)
	var e *Error
	require.True(t, errors.As(err, &e))
	assert.Equal(t, "json-rpc error -32602: bad", e.Error())
}
