package worker

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/funcmcp/funcmcp/metadata"
)

// TestRepliesSayTheirLength: every answer to an invocation, in either
// form, says its length, also past net/http's 2 KiB buffer (where it would
// otherwise go chunked), and so does a failure.
func TestRepliesSayTheirLength(t *testing.T) {
	a := New(&Options{Stdout: io.Discard, Stderr: io.Discard})
	type out struct {
		Text string `json:"text"`
	}
	AddTool(a, "big", func(context.Context, *ToolContext, struct{}) (*Result, out, error) {
		return nil, out{strings.Repeat("x", 4000)}, nil
	}).WithDescription("Big.")
	AddTool(a, "small", func(context.Context, *ToolContext, struct{}) (*Result, out, error) {
		return nil, out{"x"}, nil
	}).WithDescription("Small.")
	AddTool(a, "failing", func(context.Context, *ToolContext, struct{}) (*Result, out, error) {
		return nil, out{}, &CapabilityError{Capability: "sampling"}
	}).WithDescription("Fails.")
	srv := httptest.NewServer(a.Handler())
	defer srv.Close()
	for _, fn := range []string{"big", "small", "failing"} {
		for _, accept := range []string{"", metadata.MediaTypeDirectResult} {
			req, err := http.NewRequest(http.MethodPost, srv.URL+"/"+fn, strings.NewReader(body(t, `{"name":"`+fn+`","arguments":{}}`, 1)))
			requireNoError(t, err, "request")
			req.Header.Set("Content-Type", "application/json")
			if accept != "" {
				req.Header.Set("Accept", accept)
			}
			res, err := http.DefaultClient.Do(req)
			requireNoError(t, err, "POST")
			data, err := io.ReadAll(res.Body)
			res.Body.Close()
			requireNoError(t, err, "reading")
			if res.ContentLength != int64(len(data)) || len(res.TransferEncoding) > 0 {
				t.Errorf("%s (Accept %q): %d, Content-Length %d, Transfer-Encoding %v, body of %d bytes",
					fn, accept, res.StatusCode, res.ContentLength, res.TransferEncoding, len(data))
			}
			if fn == "big" && len(data) < 4000 {
				t.Errorf("big: %d bytes", len(data))
			}
		}
	}
}
