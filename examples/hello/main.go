// Command hello is the smallest funcmcp app: one typed MCP tool whose input
// and output schemas come from Go structs. README.md shows it whole.
package main

import (
	"context"
	"strings"
	"unicode"

	"github.com/funcmcp/funcmcp/worker"
)

// CountInput is the tool's arguments.
type CountInput struct {
	Text string `json:"text" jsonschema:"The text to count in."`
}

// CountOutput is the tool's structured result.
type CountOutput struct {
	Words      int `json:"words" jsonschema:"Runs of letters and digits."`
	Characters int `json:"characters" jsonschema:"Unicode code points."`
}

func main() {
	app := worker.New(nil)
	worker.AddTool(app, "count_words",
		func(ctx context.Context, tc *worker.ToolContext, in CountInput) (*worker.Result, CountOutput, error) {
			words := strings.FieldsFunc(in.Text, func(r rune) bool {
				return !unicode.IsLetter(r) && !unicode.IsDigit(r)
			})
			return nil, CountOutput{Words: len(words), Characters: len([]rune(in.Text))}, nil
		}).
		WithDescription("Count the words and characters of a text.")
	app.Main() // "emit-metadata DIR" writes the function folders; no arguments: serve
}
