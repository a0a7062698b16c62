package main

import (
	"context"
	"fmt"

	"github.com/funcmcp/funcmcp/worker"
)

// PrimesInput is primes' arguments.
type PrimesInput struct {
	From int `json:"from,omitempty" jsonschema:"Smallest number to consider; 2 when omitted."`
	To   int `json:"to" jsonschema:"Largest number to consider, at most 1000000."`
}

// maxPrimesRange bounds the sieve so a call stays cheap.
const maxPrimesRange = 1_000_000

func registerPrimes(app *worker.App) {
	// A slice result wrapped under a field of our choice: {"primes": [...]}.
	//docs:begin register
	worker.AddTool(app, "primes", func(_ context.Context, _ *worker.ToolContext, in PrimesInput) (*worker.Result, []int, error) {
		primes, err := primesBetween(in.From, in.To)
		return nil, primes, err
	}).
		WithOutputField("primes").
		//docs:end register
		WithDescription("List the prime numbers between two bounds (inclusive), using a sieve of Eratosthenes. " +
			"The upper bound may be at most 1000000.")
}

// primesBetween returns the primes p with from <= p <= to.
func primesBetween(from, to int) ([]int, error) {
	if to > maxPrimesRange {
		return nil, fmt.Errorf("to must be at most %d, not %d", maxPrimesRange, to)
	}
	if from > to {
		return nil, fmt.Errorf("from (%d) must not be greater than to (%d)", from, to)
	}
	from = max(from, 2)
	out := []int{}
	if to < 2 {
		return out, nil
	}
	composite := make([]bool, to+1)
	for i := 2; i*i <= to; i++ {
		if !composite[i] {
			for j := i * i; j <= to; j += i {
				composite[j] = true
			}
		}
	}
	for i := from; i <= to; i++ {
		if !composite[i] {
			out = append(out, i)
		}
	}
	return out, nil
}
