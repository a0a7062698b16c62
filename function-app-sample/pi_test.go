package main

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/worker"
)

func TestEstimatePi(t *testing.T) {
	tests := []struct {
		name    string
		in      PiInput
		wantErr string
	}{
		{name: "small", in: PiInput{Samples: 200_000, Batches: 4}},
		{name: "one sample per batch", in: PiInput{Samples: 7, Batches: 7}},
		{name: "too many samples", in: PiInput{Samples: maxPiSamples + 1}, wantErr: "samples must be between 1 and 100000000"},
		{name: "negative samples", in: PiInput{Samples: -1}, wantErr: "samples must be between 1"},
		{name: "more batches than samples", in: PiInput{Samples: 3, Batches: 4}, wantErr: "batches must be between 1 and 100 and at most samples, not 4"},
		{name: "too many batches", in: PiInput{Samples: 1000, Batches: 101}, wantErr: "not 101"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// No channel from the host: Progress and ClientLog do nothing.
			_, got, err := estimatePi(t.Context(), &worker.ToolContext{Name: "estimate_pi"}, tt.in)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.in.Samples, got.Samples)
			assert.Equal(t, tt.in.Batches, got.Batches)
			assert.InDelta(t, 4*float64(got.Inside)/float64(got.Samples), got.Estimate, 1e-12)
			assert.InDelta(t, got.Estimate-math.Pi, got.Error, 1e-12)
			if tt.in.Samples >= 100_000 {
				assert.InDelta(t, math.Pi, got.Estimate, 0.02)
			}
		})
	}
}

func TestEstimatePiIsDeterministicAndStops(t *testing.T) {
	_, a, err := estimatePi(t.Context(), &worker.ToolContext{}, PiInput{Samples: 10_000, Batches: 3})
	require.NoError(t, err)
	_, b, err := estimatePi(t.Context(), &worker.ToolContext{}, PiInput{Samples: 10_000, Batches: 5})
	require.NoError(t, err)
	assert.Equal(t, a.Inside, b.Inside, "the same points whatever the batching")

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, _, err = estimatePi(ctx, &worker.ToolContext{}, PiInput{})
	assert.ErrorIs(t, err, context.Canceled)
}
