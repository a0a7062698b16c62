package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
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

// TestMemoryStoreIsBounded: a full store refuses new tasks until some
// expire.
func TestMemoryStoreIsBounded(t *testing.T) {
	now := time.Now()
	s := NewMemory(func() time.Time { return now })
	s.max = 3
	ctx := context.Background()
	for i := range 3 {
		require.NoError(t, s.Create(ctx, &Task{ID: fmt.Sprint(i), Created: now, TTL: time.Duration(i+1) * time.Minute}))
	}
	assert.ErrorIs(t, s.Create(ctx, &Task{ID: "more", Created: now, TTL: time.Hour}), ErrFull)
	now = now.Add(90 * time.Second) // task 0 has expired
	require.NoError(t, s.Create(ctx, &Task{ID: "more", Created: now, TTL: time.Hour}))
	assert.ErrorIs(t, s.Create(ctx, &Task{ID: "again", Created: now, TTL: time.Hour}), ErrFull)
}

func TestAzureStore(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
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
func repoRoot(t testing.TB) string {
	t.Helper()
	root, err := filepath.Abs("../../..")
	require.NoError(t, err)
	return root
}

// BenchmarkAzureStore times what a task costs in Azure Storage (Azurite on
// loopback): creating a record (before the client gets its handle), reading
// it (tasks/get) and the heartbeat's read-and-write, for a small record and
// for one with a 100 KiB result, which goes to a blob.
func BenchmarkAzureStore(b *testing.B) {
	az := testutil.StartAzurite(b, repoRoot(b))
	ctx := context.Background()
	s, err := NewAzure(ctx, az.ConnectionString(), nil)
	require.NoError(b, err)
	big := json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("x", 100<<10) + `"}]}`)
	for _, size := range []struct {
		name   string
		result json.RawMessage
	}{{"small", nil}, {"100KiB", big}} {
		n := 0
		newTask := func() *Task {
			n++
			now := time.Now()
			return &Task{ID: fmt.Sprintf("%s-%d", size.name, n), Scope: "c", Status: StatusWorking,
				Created: now, Updated: now, Heartbeat: now, TTL: time.Hour, Result: size.result}
		}
		b.Run(size.name+"/create", func(b *testing.B) {
			for b.Loop() {
				if err := s.Create(ctx, newTask()); err != nil {
					b.Fatal(err)
				}
			}
		})
		t := newTask()
		require.NoError(b, s.Create(ctx, t))
		b.Run(size.name+"/get", func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Get(ctx, t.ID); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(size.name+"/heartbeat", func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Update(ctx, t.ID, func(t *Task) error { t.Heartbeat = time.Now(); return nil }); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
