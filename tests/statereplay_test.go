package tests

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// TestLimitsRequestStateSingleUseAcrossInstances (issue 25, finding 8):
// two funchost processes that share a store (Azure Storage, or Redis) and
// the key that seals request states. The state of a booking, answered on
// both at once and then again, books once: each instance remembered the
// states that opened on it alone, so the same state booked once on each.
// Where the instances share nothing but the key, each remembers its own
// (docs/configuration.md).
//
// Then the store loses everything (Azurite restarted empty, Redis
// flushed) and the same state goes to a third instance, which never saw
// it (issue 41, item 3): it is refused, as its epoch is gone with the
// store, where it booked a second time before. A booking started after the
// loss is answered on another instance and books once.
func TestLimitsRequestStateSingleUseAcrossInstances(t *testing.T) {
	shares := map[string]func(t *testing.T) (env []string, empty func(t *testing.T)){
		// The task table of the Azure store keeps the used states, with a
		// backplane that is not shared.
		"taskstore": func(t *testing.T) ([]string, func(t *testing.T)) {
			az := testutil.StartAzurite(t, repoRoot(t))
			return []string{"FUNCMCP_TASK_STORE=azure", "AzureWebJobsStorage=" + az.ConnectionString(),
				"WEBSITE_AUTH_ENCRYPTION_KEY=" + sharedSessionKey}, func(*testing.T) { az.Stop(); az.Start() }
		},
		"azurequeues": func(t *testing.T) ([]string, func(t *testing.T)) {
			f := startFleet(t, "azurequeues")
			return f.env, f.empty
		},
		"redis": func(t *testing.T) ([]string, func(t *testing.T)) {
			f := startFleet(t, "redis")
			return f.env, f.empty
		},
	}
	for _, name := range []string{"taskstore", "azurequeues", "redis"} {
		t.Run(name, func(t *testing.T) {
			env, empty := shares[name](t)
			app := sample(t)
			a, b := startHostEnv(t, app, env), startHostEnv(t, app, env)
			ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
			defer cancel()
			alice := map[string]string{"X-Functions-Key": "alice"}
			ex, err := bookDaysOff(ctx, a.endpoint, 1, bookArgs(""), "", alice)
			require.NoError(t, err)
			state := readInputRequired(t, ex).Result.RequestState
			require.NotEmpty(t, state, "%s", ex.body)
			answer := `,"inputResponses":{"confirm_days_off":{"action":"accept","content":{"confirm":true}}},"requestState":"` + state + `"`

			// The same answer on both instances at once, then on each again.
			var wg sync.WaitGroup
			outs := make([]exchange, 4)
			errs := make([]error, 4)
			for i, h := range []*host{a, b} {
				wg.Go(func() { outs[i], errs[i] = bookDaysOff(ctx, h.endpoint, 2+i, bookArgs(""), answer, alice) })
			}
			wg.Wait()
			outs[2], errs[2] = bookDaysOff(ctx, a.endpoint, 4, bookArgs(""), answer, alice)
			outs[3], errs[3] = bookDaysOff(ctx, b.endpoint, 5, bookArgs(""), answer, alice)
			booked, refused := 0, 0
			for i, ex := range outs {
				require.NoError(t, errs[i])
				r := readInputRequired(t, ex)
				if r.Error != nil {
					assert.Contains(t, r.Error.Message, "used already", "%s", ex.body)
					refused++
					continue
				}
				assert.Equal(t, "booked", structured(t, ex.body)["status"], "%s", ex.body)
				booked++
			}
			assert.Equal(t, 1, booked, "one booking for one state")
			assert.Equal(t, 3, refused)
			const executed = "Executed 'Functions.book_days_off' (Succeeded)"
			count := func() int {
				return strings.Count(a.console.String(), executed) + strings.Count(b.console.String(), executed)
			}
			require.Eventually(t, func() bool { return count() >= 1 }, clientTimeout, 10*time.Millisecond)
			assert.Equal(t, 1, count(), "booked once\n%s\n%s", a.console.String(), b.console.String())

			empty(t)
			c := startHostEnv(t, app, env)
			ex, err = bookDaysOff(ctx, c.endpoint, 6, bookArgs(""), answer, alice)
			require.NoError(t, err)
			r := readInputRequired(t, ex)
			require.NotNil(t, r.Error, "the state used before the store was lost books again: %s", ex.body)
			assert.Equal(t, -32602, r.Error.Code, "%s", ex.body)
			assert.Contains(t, r.Error.Message, "record of used states was reset", "%s", ex.body)

			// After the loss: a new booking, its state answered on another
			// instance, books once.
			ex, err = bookDaysOff(ctx, c.endpoint, 7, bookArgs(""), "", alice)
			require.NoError(t, err)
			state = readInputRequired(t, ex).Result.RequestState
			require.NotEmpty(t, state, "%s", ex.body)
			answer = `,"inputResponses":{"confirm_days_off":{"action":"accept","content":{"confirm":true}}},"requestState":"` + state + `"`
			ex, err = bookDaysOff(ctx, a.endpoint, 8, bookArgs(""), answer, alice)
			require.NoError(t, err)
			assert.Equal(t, "booked", structured(t, ex.body)["status"], "%s", ex.body)
			ex, err = bookDaysOff(ctx, b.endpoint, 9, bookArgs(""), answer, alice)
			require.NoError(t, err)
			assert.Contains(t, string(ex.body), "used already")
			total := func() int { return count() + strings.Count(c.console.String(), executed) }
			require.Eventually(t, func() bool { return total() >= 2 }, clientTimeout, 10*time.Millisecond)
			assert.Equal(t, 2, total(), "booked once before the loss, once after\n%s\n%s\n%s", a.console.String(), b.console.String(), c.console.String())
		})
	}
}
