package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// testClaim runs the claim contract on stores that share their tasks (the
// same store for the memory one): of several instances claiming the run of
// a stopped instance at once, exactly one takes it; the record keeps the
// call, counts the run and names the winner; a task out of runs, or one
// whose instance answered again, is not claimed.
func testClaim(t *testing.T, stores []Store) {
	ctx := context.Background()
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	call := json.RawMessage(`{"arguments":{"seed":7}}`)
	seen := &Task{ID: tid("claim"), Scope: "c", Owner: "alice", Tool: "sim", Instance: "dead", Status: StatusWorking,
		Created: t0, Updated: t0, Heartbeat: t0, TTL: time.Hour, Attempt: 1, Attempts: 3, Rerun: call,
		InputRequests: map[string]json.RawMessage{"k": json.RawMessage(`{}`)}}
	require.NoError(t, stores[0].Create(ctx, seen))

	const claimers = 6
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		won  []string
		lost int
	)
	for i := range claimers {
		wg.Go(func() {
			me := fmt.Sprintf("live%d", i)
			_, err := Claim(ctx, stores[i%len(stores)], seen.ID, seen, me, time.Now(), "again on "+me)
			mu.Lock()
			defer mu.Unlock()
			if err == nil {
				won = append(won, me)
				return
			}
			assert.ErrorIs(t, err, ErrNotClaimed)
			lost++
		})
	}
	wg.Wait()
	require.Len(t, won, 1, "exactly one instance claims the run")
	assert.Equal(t, claimers-1, lost)

	got, err := stores[len(stores)-1].Get(ctx, seen.ID)
	require.NoError(t, err)
	assert.Equal(t, won[0], got.Instance)
	assert.Equal(t, 2, got.Attempt)
	assert.Equal(t, 3, got.Attempts)
	assert.Equal(t, StatusWorking, got.Status)
	assert.Equal(t, "again on "+won[0], got.StatusMessage)
	assert.JSONEq(t, string(call), string(got.Rerun), "the call is kept for the next run")
	assert.Equal(t, "alice", string(got.Owner))
	assert.Empty(t, got.InputRequests, "the new run asks again")

	// The same stale view again: the record moved on, nothing is claimed.
	_, err = Claim(ctx, stores[0], seen.ID, seen, "late", time.Now(), "late")
	require.ErrorIs(t, err, ErrNotClaimed)

	// The last run: claimed once more, then no run is left.
	third, err := Claim(ctx, stores[0], seen.ID, got, "third", time.Now(), "third")
	require.NoError(t, err)
	assert.Equal(t, 3, third.Attempt)
	assert.False(t, third.CanRunAgain())
	_, err = Claim(ctx, stores[0], seen.ID, third, "fourth", time.Now(), "fourth")
	require.ErrorIs(t, err, ErrNotClaimed)

	// A task whose tool does not allow runs again is never claimed.
	plain := &Task{ID: tid("plain"), Scope: "c", Instance: "dead", Status: StatusWorking, Created: t0, Updated: t0, Heartbeat: t0, TTL: time.Hour}
	require.NoError(t, stores[0].Create(ctx, plain))
	_, err = Claim(ctx, stores[0], plain.ID, plain, "live", time.Now(), "no")
	require.ErrorIs(t, err, ErrNotClaimed)
}

func TestMemoryStoreClaimsOnce(t *testing.T) {
	testClaim(t, []Store{NewMemory(nil)})
}

func TestAzureStoreClaimsOnce(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	ctx := context.Background()
	var stores []Store
	for range 3 { // three instances of one storage account
		s, err := NewAzure(ctx, az.ConnectionString(), nil)
		require.NoError(t, err)
		stores = append(stores, s)
	}
	testClaim(t, stores)
}

// TestAzureClaimLosesOnETag: a claim whose conditional write finds the row
// changed since its read (another instance claimed in between) reads
// again, sees the other claim and takes nothing.
func TestAzureClaimLosesOnETag(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	ctx := context.Background()
	a, err := NewAzure(ctx, az.ConnectionString(), nil)
	require.NoError(t, err)
	b, err := NewAzure(ctx, az.ConnectionString(), nil)
	require.NoError(t, err)
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	seen := &Task{ID: tid("etag"), Scope: "c", Instance: "dead", Status: StatusWorking, Created: t0, Updated: t0, Heartbeat: t0,
		TTL: time.Hour, Attempt: 1, Attempts: 2, Rerun: json.RawMessage(`{}`)}
	require.NoError(t, a.Create(ctx, seen))

	// A's claim, between its read and its write, lets B claim: A's write,
	// conditional on the row it read, is refused; A reads again, sees B's
	// claim and takes nothing.
	meddled := &meddler{Store: a, between: func() {
		_, err := Claim(ctx, b, seen.ID, seen, "b", time.Now(), "b")
		assert.NoError(t, err)
	}}
	_, err = Claim(ctx, meddled, seen.ID, seen, "a", time.Now(), "a")
	require.ErrorIs(t, err, ErrNotClaimed)
	assert.Equal(t, 2, meddled.reads, "the refused write made A read again")
	got, err := a.Get(ctx, seen.ID)
	require.NoError(t, err)
	assert.Equal(t, "b", got.Instance)
	assert.Equal(t, 2, got.Attempt)
}

// meddler is a store whose first Update runs between after its read and
// before its write.
type meddler struct {
	Store
	between func()
	reads   int
}

func (m *meddler) Update(ctx context.Context, id string, change func(t *Task) error) (*Task, error) {
	return m.Store.Update(ctx, id, func(t *Task) error {
		m.reads++
		if m.reads == 1 {
			m.between()
		}
		return change(t)
	})
}
