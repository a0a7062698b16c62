package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/funcmcp/funcmcp/worker"
)

// EpidemicInput is simulate_epidemic's arguments.
type EpidemicInput struct {
	Population      int     `json:"population,omitempty" jsonschema:"People in the population, 100 to 10000000; 100000 when omitted."`
	InitialInfected int     `json:"initial_infected,omitempty" jsonschema:"People infected on day 0, 1 to the population; 10 when omitted."`
	R0              float64 `json:"r0,omitempty" jsonschema:"Basic reproduction number, 0.1 to 20; 2.5 when omitted."`
	InfectiousDays  float64 `json:"infectious_days,omitempty" jsonschema:"Mean days a case stays infectious, 1 to 60; 7 when omitted."`
	Days            int     `json:"days,omitempty" jsonschema:"Days to simulate, 1 to 730; 180 when omitted."`
	DurationSeconds int     `json:"duration_seconds,omitempty" jsonschema:"How long the run takes, 1 to 600 seconds, a progress report each second; 20 when omitted. Minutes are for a client that runs the call as a task."`
	Seed            uint64  `json:"seed,omitempty" jsonschema:"Seed of the random draws: the same arguments and seed give the same epidemic."`
}

// EpidemicDay is the state of the population at the end of a day.
type EpidemicDay struct {
	Day         int `json:"day"`
	Susceptible int `json:"susceptible"`
	Infected    int `json:"infected"`
	Recovered   int `json:"recovered"`
}

// EpidemicReport is simulate_epidemic's result.
type EpidemicReport struct {
	Population        int           `json:"population"`
	Days              int           `json:"days"`
	Seed              uint64        `json:"seed"`
	PeakDay           int           `json:"peak_day" jsonschema:"The day the most people were infected at once."`
	PeakInfected      int           `json:"peak_infected"`
	TotalInfected     int           `json:"total_infected" jsonschema:"Everyone infected at some point, the initial cases included."`
	AttackRatePercent float64       `json:"attack_rate_percent" jsonschema:"Total infected as a percentage of the population."`
	Final             EpidemicDay   `json:"final"`
	Weekly            []EpidemicDay `json:"weekly" jsonschema:"The state on day 0 and at the end of every seventh day."`
}

// Defaults and bounds of simulate_epidemic.
const (
	defaultPopulation     = 100_000
	maxPopulation         = 10_000_000
	defaultInitial        = 10
	defaultR0             = 2.5
	defaultInfectiousDays = 7
	defaultEpidemicDays   = 180
	maxEpidemicDays       = 730
	// defaultEpidemicRun is well within the 60 s after which the official
	// TypeScript clients give up on a request: a client that did not
	// negotiate tasks waits for the result. Longer runs, for tasks, are an
	// argument away.
	defaultEpidemicRun = 20
	maxEpidemicRun     = 600
)

const epidemicDescription = "Simulate an epidemic day by day with a stochastic SIR model (susceptible, infected, recovered) " +
	"and report its peak, its attack rate and the state of every week. Takes 20 seconds by default, reporting progress every second; " +
	"duration_seconds up to 600 makes it a long run, for a client that runs it as a task."

func registerEpidemic(app *worker.App) {
	// A tool that takes minutes: a client that negotiated the MCP tasks
	// extension gets a task to poll (its status message is the progress),
	// others wait for the result as for any tool. The same arguments and
	// seed give the same report: funchost may run the task again, twice,
	// on another instance when the one running it stops.
	//docs:begin task
	worker.AddTool(app, "simulate_epidemic", simulateEpidemic).
		WithTitle("Simulate an epidemic").
		WithDescription(epidemicDescription).
		WithTaskSupport(worker.TaskOptional, &worker.TaskOptions{PollInterval: time.Second, TTL: time.Hour, Reruns: 2})
	//docs:end task
}

// epidemic is a simulation under way.
type epidemic struct {
	in       EpidemicInput
	rng      *rand.Rand
	beta     float64 // infections per infectious person per day, in a wholly susceptible population
	recovery float64 // the chance that an infectious person recovers on a given day
	today    EpidemicDay
	report   EpidemicReport
}

// withDefaults fills in the omitted arguments and checks them.
func (in EpidemicInput) withDefaults() (EpidemicInput, error) {
	if in.Population == 0 {
		in.Population = defaultPopulation
	}
	if in.InitialInfected == 0 {
		in.InitialInfected = min(defaultInitial, in.Population)
	}
	if in.R0 == 0 {
		in.R0 = defaultR0
	}
	if in.InfectiousDays == 0 {
		in.InfectiousDays = defaultInfectiousDays
	}
	if in.Days == 0 {
		in.Days = defaultEpidemicDays
	}
	if in.DurationSeconds == 0 {
		in.DurationSeconds = defaultEpidemicRun
	}
	switch {
	case in.Population < 100 || in.Population > maxPopulation:
		return in, fmt.Errorf("population must be between 100 and %d, not %d", maxPopulation, in.Population)
	case in.InitialInfected < 1 || in.InitialInfected > in.Population:
		return in, fmt.Errorf("initial_infected must be between 1 and the population (%d), not %d", in.Population, in.InitialInfected)
	case !(in.R0 >= 0.1 && in.R0 <= 20):
		return in, fmt.Errorf("r0 must be between 0.1 and 20, not %v", in.R0)
	case !(in.InfectiousDays >= 1 && in.InfectiousDays <= 60):
		return in, fmt.Errorf("infectious_days must be between 1 and 60, not %v", in.InfectiousDays)
	case in.Days < 1 || in.Days > maxEpidemicDays:
		return in, fmt.Errorf("days must be between 1 and %d, not %d", maxEpidemicDays, in.Days)
	case in.DurationSeconds < 1 || in.DurationSeconds > maxEpidemicRun:
		return in, fmt.Errorf("duration_seconds must be between 1 and %d, not %d", maxEpidemicRun, in.DurationSeconds)
	}
	return in, nil
}

func newEpidemic(in EpidemicInput) *epidemic {
	recovery := 1 - math.Exp(-1/in.InfectiousDays)
	e := &epidemic{
		in:  in,
		rng: rand.New(rand.NewPCG(in.Seed, 0x5eed)),
		// A case stays infectious 1/recovery days on average (a whole
		// number of days): it infects R0 people in a susceptible
		// population.
		beta:     in.R0 * recovery,
		recovery: recovery,
		today:    EpidemicDay{Susceptible: in.Population - in.InitialInfected, Infected: in.InitialInfected},
	}
	e.report = EpidemicReport{Population: in.Population, Days: in.Days, Seed: in.Seed,
		PeakInfected: in.InitialInfected, TotalInfected: in.InitialInfected, Weekly: []EpidemicDay{e.today}}
	return e
}

// step simulates one day: each susceptible person is infected with the
// chance their contacts with the infectious give, each infectious person
// recovers with the chance of one day.
func (e *epidemic) step() {
	d := &e.today
	infection := 1 - math.Exp(-e.beta*float64(d.Infected)/float64(e.in.Population))
	newCases := binomial(e.rng, d.Susceptible, infection)
	recovered := binomial(e.rng, d.Infected, e.recovery)
	d.Day++
	d.Susceptible -= newCases
	d.Infected += newCases - recovered
	d.Recovered += recovered
	r := &e.report
	r.TotalInfected += newCases
	if d.Infected > r.PeakInfected {
		r.PeakDay, r.PeakInfected = d.Day, d.Infected
	}
	if d.Day%7 == 0 {
		r.Weekly = append(r.Weekly, *d)
	}
}

// result is the report at the end of the simulation.
func (e *epidemic) result() EpidemicReport {
	r := e.report
	r.Final = e.today
	r.AttackRatePercent = math.Round(10000*float64(r.TotalInfected)/float64(e.in.Population)) / 100
	return r
}

// binomial draws the number of successes of n trials of chance p: one by
// one for few trials, from Poisson's law when successes (or failures) are
// rare, from the normal law otherwise.
func binomial(rng *rand.Rand, n int, p float64) int {
	switch {
	case n <= 0 || p <= 0:
		return 0
	case p >= 1:
		return n
	case p > 0.5:
		return n - binomial(rng, n, 1-p)
	case n <= 200:
		k := 0
		for range n {
			if rng.Float64() < p {
				k++
			}
		}
		return k
	}
	mean := float64(n) * p
	if mean < 30 {
		// Knuth's method: count the uniform draws whose product stays
		// above e^-mean.
		limit, k, prod := math.Exp(-mean), 0, rng.Float64()
		for prod > limit {
			k++
			prod *= rng.Float64()
		}
		return min(k, n)
	}
	k := int(math.Round(mean + rng.NormFloat64()*math.Sqrt(mean*(1-p))))
	return max(0, min(n, k))
}

// simulateEpidemic spreads the simulated days over the run's seconds,
// reports progress after each second and stops as soon as the call is
// cancelled. The days simulated do not depend on the pace: the same
// arguments and seed give the same report whatever duration_seconds is.
func simulateEpidemic(ctx context.Context, tc *worker.ToolContext, in EpidemicInput) (*worker.Result, EpidemicReport, error) {
	in, err := in.withDefaults()
	if err != nil {
		return nil, EpidemicReport{}, err
	}
	e := newEpidemic(in)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for s := 1; s <= in.DurationSeconds; s++ {
		select {
		case <-ctx.Done():
			return nil, EpidemicReport{}, fmt.Errorf("the simulation stopped on day %d: %w", e.today.Day, ctx.Err())
		case <-tick.C:
		}
		for e.today.Day < in.Days*s/in.DurationSeconds {
			e.step()
		}
		d := e.today
		tc.Progress(float64(s), float64(in.DurationSeconds), fmt.Sprintf("day %d of %d: %d infected, %d recovered, %d susceptible",
			d.Day, in.Days, d.Infected, d.Recovered, d.Susceptible))
	}
	return nil, e.result(), nil
}
