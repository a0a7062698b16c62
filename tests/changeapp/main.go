// Command changeapp is the function app of the announcement tests (tests/
// announce_test.go): as soon as it starts, outside any invocation, it
// announces that each list changed and that a resource changed, and prints
// what became of each announcement ("announced <what>: ok" or the error).
//
//	echo  returns its text (a tool, so that the app has a function)
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/funcmcp/funcmcp/worker"
)

func main() {
	app := worker.New(nil)
	app.ConfigureMcpTool("echo").
		WithDescription("Returns its text.").
		WithProperty("text", worker.String, "The text.", worker.Required).
		Handle(func(_ context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			var in struct{ Text string }
			if err := tc.BindArguments(&in); err != nil {
				return nil, err
			}
			return worker.TextResult(in.Text), nil
		})
	if len(os.Args) == 1 { // serving, not emit-metadata
		go announceAll(context.Background())
	}
	app.Main()
}

// announceAll announces every kind of change once and prints the outcome.
func announceAll(ctx context.Context) {
	report := func(what string, err error) {
		switch {
		case err == nil:
			fmt.Printf("announced %s: ok\n", what)
		case errors.Is(err, worker.ErrNotSupported):
			fmt.Printf("announced %s: not supported\n", what)
		default:
			fmt.Printf("announced %s: %v\n", what, err)
		}
	}
	for _, l := range []worker.List{worker.ToolsList, worker.PromptsList, worker.ResourcesList} {
		report(string(l), worker.NotifyListChanged(ctx, l))
	}
	report("test://timer/1", worker.NotifyResourceUpdated(ctx, "test://timer/1"))
	report("test://{template}", worker.NotifyResourceUpdated(ctx, "test://{template}"))
}
