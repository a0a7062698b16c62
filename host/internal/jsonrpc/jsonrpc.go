package jsonrpc

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/funcmcp/funcmcp/metadata"
)

// Error is a JSON-RPC error: returned by a tool call (or a check before
// it), it is answered with this code, message and data.
type Error struct {
	Code    int
	Message string
	Data    any // encoded as "data" when not nil
}

func (e *Error) Error() string {
	return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message)
}

// JSON-RPC error codes.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternalError  = -32603
	// CodeServerError is the implementation-defined code of the host's own
	// refusals: HTTP-level ones (403, 405, 406, 413, 415, a bad session or
	// version header), a busy host and a call stopped at shutdown.
	CodeServerError = -32000
)

// AppendResponseStart appends the start of a response envelope up to its
// id: {"jsonrpc":"2.0","id":<id>. id is the request's id as sent (a JSON
// string or number); nil writes null. The caller appends the "result" or
// "error" member, then '}'.
func AppendResponseStart(b, id []byte) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	if id == nil {
		return append(b, "null"...)
	}
	return append(b, id...)
}

// AppendErrorMember appends the error member of a response:
// ,"error":{"code":…,"message":…[,"data":…]}. When data does not encode it
// is left out and the error is returned (the member is still complete).
func AppendErrorMember(b []byte, code int, message string, data any) ([]byte, error) {
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	b = append(b, `,"message":`...)
	b = metadata.AppendJSONString(b, message)
	var err error
	if data != nil {
		var encoded []byte
		if encoded, err = metadata.Marshal(data); err == nil {
			b = append(b, `,"data":`...)
			b = append(b, encoded...)
		} else {
			err = fmt.Errorf("encoding the data of error %d: %w", code, err)
		}
	}
	return append(b, '}'), err
}

// AppendError appends a whole error response (see [AppendResponseStart] and
// [AppendErrorMember]).
func AppendError(b, id []byte, code int, message string, data any) ([]byte, error) {
	b = AppendResponseStart(b, id)
	b, err := AppendErrorMember(b, code, message, data)
	return append(b, '}'), err
}

// Refuse answers a request with an HTTP error status and a JSON-RPC error
// response as a plain application/json body, whatever the client accepts:
// the transport-level refusals. The error, if any, is that of data (which
// is then left out); the response is written anyway.
func Refuse(w http.ResponseWriter, status int, id []byte, code int, message string, data any) error {
	body, err := AppendError(make([]byte, 0, 128), id, code, message, data)
	hdr := w.Header()
	hdr["Content-Type"] = jsonContentType
	hdr["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
	return err
}

// jsonContentType is shared: net/http never writes into header values.
var jsonContentType = []string{"application/json"}
