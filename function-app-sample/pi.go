package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/funcmcp/funcmcp/worker"
)

// PiInput is estimate_pi's arguments.
type PiInput struct {
	Samples int `json:"samples,omitempty" jsonschema:"Random points to throw, 1 to 100000000; 20000000 when omitted."`
	Batches int `json:"batches,omitempty" jsonschema:"Batches to split the work into, one progress report each, 1 to 100; 20 when omitted."`
}

// PiEstimate is estimate_pi's result.
type PiEstimate struct {
	Estimate float64 `json:"estimate" jsonschema:"4 × inside / samples."`
	Error    float64 `json:"error" jsonschema:"The estimate minus π."`
	Samples  int     `json:"samples"`
	Inside   int     `json:"inside" jsonschema:"Points that fell inside the quarter circle."`
	Batches  int     `json:"batches"`
}

// Bounds of estimate_pi: 100 million points take a few seconds.
const (
	defaultPiSamples = 20_000_000
	maxPiSamples     = 100_000_000
	defaultPiBatches = 20
	maxPiBatches     = 100
)

func registerPi(app *worker.App) {
	// A long-running tool: it reports its progress after every batch
	// (notifications/progress, for clients that send a progressToken) and
	// logs to the client (notifications/message, at the level it asked for).
	worker.AddTool(app, "estimate_pi", estimatePi).
		WithTitle("Estimate π").
		WithDescription("Estimate π by the Monte Carlo method: throw random points into the unit square and count " +
			"those inside the quarter circle. Long-running with many samples; reports progress after every batch.")
}

func estimatePi(ctx context.Context, tc *worker.ToolContext, in PiInput) (*worker.Result, PiEstimate, error) {
	samples, batches := in.Samples, in.Batches
	if samples == 0 {
		samples = defaultPiSamples
	}
	if batches == 0 {
		batches = defaultPiBatches
	}
	if samples < 1 || samples > maxPiSamples {
		return nil, PiEstimate{}, fmt.Errorf("samples must be between 1 and %d, not %d", maxPiSamples, samples)
	}
	if batches < 1 || batches > maxPiBatches || batches > samples {
		return nil, PiEstimate{}, fmt.Errorf("batches must be between 1 and %d and at most samples, not %d", maxPiBatches, batches)
	}
	tc.ClientLogf(worker.LevelInfo, "estimating π from %d samples in %d batches", samples, batches)
	rng := rand.New(rand.NewPCG(1, 2)) // fixed seed: the same arguments give the same estimate
	inside, done := 0, 0
	for b := 1; b <= batches; b++ {
		if err := ctx.Err(); err != nil {
			return nil, PiEstimate{}, err
		}
		n := samples*b/batches - done
		for range n {
			x, y := rng.Float64(), rng.Float64()
			if x*x+y*y <= 1 {
				inside++
			}
		}
		done += n
		estimate := 4 * float64(inside) / float64(done)
		//docs:begin progress
		tc.Progress(float64(b), float64(batches), fmt.Sprintf("batch %d of %d: π ≈ %.6f after %d samples", b, batches, estimate, done))
		tc.ClientLogf(worker.LevelDebug, "batch %d: %d of %d points inside", b, inside, done)
		//docs:end progress
	}
	estimate := 4 * float64(inside) / float64(samples)
	return nil, PiEstimate{Estimate: estimate, Error: estimate - math.Pi, Samples: samples, Inside: inside, Batches: batches}, nil
}
