package main

import (
	"context"
	"fmt"

	"github.com/funcmcp/funcmcp/worker"
)

// FibonacciInput is fibonacci's arguments.
type FibonacciInput struct {
	Count int `json:"count" jsonschema:"How many terms, 1 to 70."`
}

// maxFibonacciTerms keeps every term below 2^53, so clients that read JSON
// numbers as doubles (JavaScript) get them exactly.
const maxFibonacciTerms = 70

// fibonacciSchema is the tool's natural output schema: an array (MCP
// 2026-07-28, SEP-2106), with its item schema behind a $ref.
const fibonacciSchema = `{
  "type": "array",
  "description": "The first count Fibonacci numbers, F(0) = 0 first.",
  "items": {"$ref": "#/$defs/term"},
  "minItems": 1,
  "maxItems": 70,
  "$defs": {"term": {"type": "integer", "minimum": 0}}
}`

func registerFibonacci(app *worker.App) {
	// An explicit array output schema. Clients of MCP 2026-07-28 see it and
	// get the array itself; older clients (and the Azure Functions host) see
	// its object projection, {"type":"object","properties":{"result":…}},
	// with the $ref rewritten to #/properties/result/$defs/term, and get
	// {"result": [...]}.
	//docs:begin register
	worker.AddTool(app, "fibonacci", func(_ context.Context, _ *worker.ToolContext, in FibonacciInput) (*worker.Result, []int64, error) {
		terms, err := fibonacci(in.Count)
		return nil, terms, err
	}).
		WithOutputSchema(fibonacciSchema).
		//docs:end register
		WithTitle("Fibonacci numbers").
		WithDescription("List the first count Fibonacci numbers (F(0) = 0, F(1) = 1, …), at most 70.")
}

// fibonacci returns F(0) … F(count-1).
func fibonacci(count int) ([]int64, error) {
	if count < 1 || count > maxFibonacciTerms {
		return nil, fmt.Errorf("count must be between 1 and %d, not %d", maxFibonacciTerms, count)
	}
	terms := make([]int64, count)
	for i := range terms {
		if i < 2 {
			terms[i] = int64(i)
			continue
		}
		terms[i] = terms[i-1] + terms[i-2]
	}
	return terms, nil
}
