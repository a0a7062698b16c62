// Command taskapp is the function app of the task store tests (tests/
// taskstore_test.go): one tool that runs as an MCP task when the client
// allows it.
//
//	sized  waits "ms" milliseconds (or until cancelled), then returns a
//	       text result of "bytes" bytes: "fill" repeated ("x" when not
//	       given), cut to the size
package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/funcmcp/funcmcp/worker"
)

func main() {
	app := worker.New(nil)
	app.ConfigureMcpTool("sized").
		WithDescription("Waits, then returns a text of the size asked for.").
		WithProperty("bytes", worker.Integer, "How many bytes of text to return.", worker.Required).
		WithProperty("ms", worker.Integer, "How long to wait first, in milliseconds.", worker.Optional).
		WithProperty("fill", worker.String, "The text repeated to make the result; x when not given.", worker.Optional).
		WithTaskSupport(worker.TaskOptional, nil).
		Handle(sized)
	app.Main()
}

func sized(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
	var in struct {
		Bytes int    `json:"bytes"`
		MS    int    `json:"ms"`
		Fill  string `json:"fill"`
	}
	if err := tc.BindArguments(&in); err != nil {
		return nil, err
	}
	if in.Bytes < 0 || in.Bytes > 32<<20 {
		return nil, fmt.Errorf("bytes must be between 0 and %d, not %d", 32<<20, in.Bytes)
	}
	select {
	case <-time.After(time.Duration(in.MS) * time.Millisecond):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return worker.TextResult(sizedText(in.Fill, in.Bytes)), nil
}

// sizedText is fill ("x" when empty) repeated and cut to n bytes.
func sizedText(fill string, n int) string {
	if fill == "" {
		fill = "x"
	}
	return strings.Repeat(fill, n/len(fill)+1)[:n]
}
