package main

import (
	"context"
	"fmt"
	"strings"

	"go.opentelemetry.io/otel"

	"github.com/funcmcp/funcmcp/worker"
)

func registerRoman(app *worker.App) {
	// No output schema: the result is one plain text block.
	app.ConfigureMcpTool("to_roman").
		WithDescription("Write a whole number between 1 and 3999 in Roman numerals, e.g. 2026 → MMXXVI.").
		WithProperty("number", worker.Integer, "The number to convert, 1 to 3999.", worker.Required).
		Handle(func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			var args struct {
				Number int `json:"number"`
			}
			if err := tc.BindArguments(&args); err != nil {
				return nil, err
			}
			// A span of the tool's own: with telemetry on it nests under the
			// worker's span of the call (a no-op otherwise).
			_, span := otel.Tracer("function-app-sample").Start(ctx, "roman")
			s, err := roman(args.Number)
			span.End()
			if err != nil {
				return nil, err
			}
			return &worker.Result{Content: []worker.Content{worker.Text(s)}}, nil
		})
}

var romanDigits = []struct {
	value  int
	symbol string
}{
	{1000, "M"}, {900, "CM"}, {500, "D"}, {400, "CD"}, {100, "C"}, {90, "XC"},
	{50, "L"}, {40, "XL"}, {10, "X"}, {9, "IX"}, {5, "V"}, {4, "IV"}, {1, "I"},
}

// roman writes n (1..3999) in Roman numerals.
func roman(n int) (string, error) {
	if n < 1 || n > 3999 {
		return "", fmt.Errorf("number must be between 1 and 3999, not %d", n)
	}
	var b strings.Builder
	for _, d := range romanDigits {
		for n >= d.value {
			b.WriteString(d.symbol)
			n -= d.value
		}
	}
	return b.String(), nil
}
