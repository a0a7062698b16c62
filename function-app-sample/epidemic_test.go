package main

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/worker"
)

// run simulates in to the end at once, without the handler's pace.
func run(t *testing.T, in EpidemicInput) EpidemicReport {
	t.Helper()
	in, err := in.withDefaults()
	require.NoError(t, err)
	e := newEpidemic(in)
	for e.today.Day < in.Days {
		e.step()
	}
	return e.result()
}

func TestEpidemicArguments(t *testing.T) {
	tests := []struct {
		name    string
		in      EpidemicInput
		wantErr string
	}{
		{name: "defaults", in: EpidemicInput{}},
		{name: "a small town", in: EpidemicInput{Population: 100, InitialInfected: 100, Days: 1, DurationSeconds: 600}},
		{name: "population too small", in: EpidemicInput{Population: 99}, wantErr: "population must be between 100 and 10000000, not 99"},
		{name: "population too large", in: EpidemicInput{Population: maxPopulation + 1}, wantErr: "population must be between"},
		{name: "more initial cases than people", in: EpidemicInput{Population: 100, InitialInfected: 101}, wantErr: "initial_infected must be between 1 and the population (100), not 101"},
		{name: "negative r0", in: EpidemicInput{R0: -1}, wantErr: "r0 must be between 0.1 and 20, not -1"},
		{name: "infectious less than a day", in: EpidemicInput{InfectiousDays: 0.5}, wantErr: "infectious_days must be between 1 and 60, not 0.5"},
		{name: "too many days", in: EpidemicInput{Days: 731}, wantErr: "days must be between 1 and 730, not 731"},
		{name: "too long a run", in: EpidemicInput{DurationSeconds: 601}, wantErr: "duration_seconds must be between 1 and 600, not 601"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.in.withDefaults()
			if tt.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tt.wantErr)
		})
	}
}

// TestEpidemicModel: the population is conserved, the report adds up, the
// same seed gives the same epidemic, and the attack rate is near the one
// the SIR final-size equation gives (z = 1 - e^(-R0 z)).
func TestEpidemicModel(t *testing.T) {
	tests := []struct {
		name       string
		in         EpidemicInput
		attackRate float64 // percent, from the final-size equation
	}{
		{name: "R0 2.5", in: EpidemicInput{Population: 200_000, R0: 2.5, Days: 365, Seed: 7}, attackRate: 89.3},
		{name: "R0 1.5", in: EpidemicInput{Population: 200_000, InitialInfected: 100, R0: 1.5, Days: 730, Seed: 7}, attackRate: 58.3},
		{name: "R0 below 1 dies out", in: EpidemicInput{Population: 200_000, R0: 0.5, Days: 365, Seed: 7}, attackRate: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := run(t, tt.in)
			assert.Equal(t, r, run(t, tt.in), "the same seed, the same epidemic")
			assert.Len(t, r.Weekly, tt.in.Days/7+1)
			for _, d := range append(r.Weekly, r.Final) {
				assert.Equal(t, tt.in.Population, d.Susceptible+d.Infected+d.Recovered, "day %d", d.Day)
			}
			assert.Equal(t, tt.in.Days, r.Final.Day)
			assert.Equal(t, r.TotalInfected, r.Final.Infected+r.Final.Recovered)
			assert.LessOrEqual(t, r.PeakDay, tt.in.Days)
			assert.InDelta(t, tt.attackRate, r.AttackRatePercent, 3)
		})
	}
	a := run(t, EpidemicInput{Seed: 1})
	b := run(t, EpidemicInput{Seed: 2})
	assert.NotEqual(t, a.Weekly, b.Weekly, "another seed, another epidemic")
}

// TestSimulateEpidemicPace: the handler takes duration_seconds (in the
// bubble's fake time), gives the report the simulation gives whatever its
// pace, and stops as soon as its call is cancelled.
func TestSimulateEpidemicPace(t *testing.T) {
	in := EpidemicInput{Population: 50_000, Days: 120, Seed: 3}
	for _, seconds := range []int{1, 7, 120} {
		synctest.Test(t, func(t *testing.T) {
			in := in
			in.DurationSeconds = seconds
			start := time.Now()
			_, got, err := simulateEpidemic(t.Context(), &worker.ToolContext{}, in)
			require.NoError(t, err)
			assert.Equal(t, time.Duration(seconds)*time.Second, time.Since(start))
			assert.Equal(t, run(t, in), got, "%d seconds", seconds)
		})
	}

	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		errc := make(chan error, 1)
		go func() {
			_, _, err := simulateEpidemic(ctx, &worker.ToolContext{}, EpidemicInput{Days: 100, DurationSeconds: 10})
			errc <- err
		}()
		time.Sleep(2500 * time.Millisecond)
		cancel()
		synctest.Wait()
		select {
		case err := <-errc:
			assert.True(t, errors.Is(err, context.Canceled), "%v", err)
			assert.ErrorContains(t, err, "the simulation stopped on day 20")
		default:
			t.Fatal("the simulation goes on after its call was cancelled")
		}
	})
}

// TestSimulateEpidemicDefaultFitsEveryClient: with its arguments omitted,
// the run ends well within the 60 s after which both official TypeScript
// clients give up on a request (a client that did not negotiate tasks waits
// for the result); the long run is an argument away.
func TestSimulateEpidemicDefaultFitsEveryClient(t *testing.T) {
	const clientTimeout = 60 * time.Second
	in, err := EpidemicInput{}.withDefaults()
	require.NoError(t, err)
	assert.LessOrEqual(t, time.Duration(in.DurationSeconds)*time.Second, clientTimeout/2)
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		_, _, err := simulateEpidemic(t.Context(), &worker.ToolContext{}, EpidemicInput{})
		require.NoError(t, err)
		assert.Equal(t, time.Duration(in.DurationSeconds)*time.Second, time.Since(start), "the fake clock of the bubble")
	})
	long, err := EpidemicInput{DurationSeconds: 300}.withDefaults()
	require.NoError(t, err, "a long run for the task demonstration")
	assert.Equal(t, 300, long.DurationSeconds)
}
