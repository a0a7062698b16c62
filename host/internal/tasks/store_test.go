package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// testStore runs the contract every Store keeps.
func testStore(t *testing.T, s Store, advance func(time.Duration)) {
	ctx := context.Background()
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	task := &Task{ID: "t1", Scope: "client-a", Tool: "slow", Status: StatusWorking, Created: t0, Updated: t0, TTL: time.Minute,
		InputRequests: map[string]json.RawMessage{"k": json.RawMessage(`{"method":"elicitation/create","params":{}}`)}}
	require.NoError(t, s.Create(ctx, task))
	task.InputRequests["k"] = json.RawMessage(`{"changed":true}`) // the store keeps its own copy

	got, err := s.Get(ctx, "t1")
	require.NoError(t, err)
	assert.Equal(t, "client-a", got.Scope)
	assert.JSONEq(t, `{"method":"elicitation/create","params":{}}`, string(got.InputRequests["k"]))

	_, err = s.Get(ctx, "nope")
	assert.ErrorIs(t, err, ErrNotFound)

	// Concurrent updates all land.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			_, err := s.Update(ctx, "t1", func(t *Task) error {
				if t.InputResponses == nil {
					t.InputResponses = map[string]json.RawMessage{}
				}
				t.InputResponses[string(rune('a'+i))] = json.RawMessage(`1`)
				return nil
			})
			assert.NoError(t, err)
		})
	}
	wg.Wait()
	got, err = s.Get(ctx, "t1")
	require.NoError(t, err)
	assert.Len(t, got.InputResponses, 8)

	// A change that fails stores nothing.
	boom := errors.New("boom")
	_, err = s.Update(ctx, "t1", func(t *Task) error { t.Status = StatusFailed; return boom })
	assert.ErrorIs(t, err, boom)
	got, _ = s.Get(ctx, "t1")
	assert.Equal(t, StatusWorking, got.Status)

	big := make([]byte, 0, 300<<10)
	big = append(big, `{"content":[{"type":"text","text":"`...)
	for len(big) < 300<<10 {
		big = append(big, 'x')
	}
	big = append(big, `"}]}`...)
	upd, err := s.Update(ctx, "t1", func(t *Task) error { t.Status, t.Result = StatusCompleted, big; return nil })
	require.NoError(t, err)
	assert.Equal(t, StatusCompleted, upd.Status)
	got, err = s.Get(ctx, "t1")
	require.NoError(t, err)
	assert.Equal(t, string(big), string(got.Result), "a large result is kept whole")

	// Expiry.
	advance(2 * time.Minute)
	_, err = s.Get(ctx, "t1")
	assert.ErrorIs(t, err, ErrNotFound, "an expired task is gone")
	_, err = s.Update(ctx, "t1", func(*Task) error { return nil })
	assert.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, s.Sweep(ctx, time.Now().Add(2*time.Minute)))
}

func TestMemoryStore(t *testing.T) {
	var mu sync.Mutex
	skew := time.Duration(0)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(skew) }
	testStore(t, NewMemory(now), func(d time.Duration) { mu.Lock(); skew += d; mu.Unlock() })
}

func TestAzureStore(t *testing.T) {
	az := testutil.StartAzuriteStorage(t, repoRoot(t))
	var mu sync.Mutex
	skew := time.Duration(0)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(skew) }
	ctx := context.Background()
	s, err := NewAzure(ctx, az.ConnectionString(), &AzureOptions{Now: now})
	require.NoError(t, err)
	_, err = NewAzure(ctx, az.ConnectionString(), nil)
	require.NoError(t, err, "opening again finds the table and container")
	testStore(t, s, func(d time.Duration) { mu.Lock(); skew += d; mu.Unlock() })

	// A second instance sees the first one's tasks, and Sweep removes the
	// expired ones from storage.
	other, err := NewAzure(ctx, az.ConnectionString(), nil)
	require.NoError(t, err)
	t0 := time.Now()
	require.NoError(t, s.Create(ctx, &Task{ID: "shared", Scope: "c", Status: StatusWorking, Created: t0, Updated: t0, TTL: time.Hour}))
	got, err := other.Get(ctx, "shared")
	require.NoError(t, err)
	assert.Equal(t, StatusWorking, got.Status)
	require.NoError(t, other.Sweep(ctx, t0.Add(2*time.Hour)))
	_, err = other.Get(ctx, "shared")
	assert.ErrorIs(t, err, ErrNotFound)
}

// repoRoot is the repository root (tests run in their package folder).
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	return root
}
