package testutil

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/funcmcp/funcmcp/metadata"
)

// InvokeTimeout bounds one [InvokeAsFunctionsHost] call, reply included, so
// that a handler that hangs fails the test instead of hanging it.
const InvokeTimeout = time.Minute

// InvokeAsFunctionsHost posts one tool call to the custom handler at base
// as the Azure Functions host does, with no funcmcp host in between: POST
// /{function} with the tool invocation context JSON-encoded as a string under
// Data.context, the method name under Metadata.sys, the invocation id and
// host version headers, and without the Accept header funchost adds.
// arguments is the tool's arguments as a JSON object. The test fails unless
// the handler answers 200 with a reply that decodes; the reply is returned
// as the Functions host receives it (that host checks nothing).
func InvokeAsFunctionsHost(t testing.TB, base, function, arguments string) metadata.InvocationResponse {
	t.Helper()
	toolContext, err := json.Marshal(fmt.Sprintf(`{"name":%q,"arguments":%s,"sessionid":"s-1","transport":{"name":"http-streamable","sessionId":"s-1"}}`, function, arguments))
	if err != nil {
		t.Fatalf("encoding the tool invocation context: %v", err)
	}
	body := fmt.Sprintf(`{"Data":{"context":%s},"Metadata":{"mcptoolargs":{},"sys":{"MethodName":%q,"UtcNow":"2026-01-01T00:00:00Z"}}}`, toolContext, function)
	req, err := http.NewRequest(http.MethodPost, base+"/"+function, strings.NewReader(body))
	if err != nil {
		t.Fatalf("making the invocation request: %v", err)
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set(metadata.HeaderInvocationID, "6f9619ff-8b86-d011-b42d-00c04fc964ff")
	req.Header.Set(metadata.HeaderHostVersion, "4.1040.300.25317")
	resp, err := (&http.Client{Timeout: InvokeTimeout}).Do(req)
	if err != nil {
		t.Fatalf("invoking %s: %v", function, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the reply of %s: %v", function, err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("invoking %s: status %d, want 200: %s", function, resp.StatusCode, data)
	}
	var reply metadata.InvocationResponse
	if err := json.Unmarshal(data, &reply); err != nil {
		t.Fatalf("decoding the reply of %s: %v: %s", function, err, data)
	}
	return reply
}
