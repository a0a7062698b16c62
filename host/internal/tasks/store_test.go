package tasks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/owner"
	"github.com/funcmcp/funcmcp/internal/testutil"
)

// testStore runs the contract every Store keeps.
func testStore(t *testing.T, s Store, advance func(time.Duration)) {
	ctx := context.Background()
	t0 := time.Now().UTC().Truncate(time.Millisecond)
	task := &Task{ID: tid("t1"), Scope: "client-a", Tool: "slow", Status: StatusWorking, Created: t0, Updated: t0, TTL: time.Minute,
		InputRequests: map[string]json.RawMessage{"k": json.RawMessage(`{"method":"elicitation/create","params":{}}`)}}
	require.NoError(t, s.Create(ctx, task))
	task.InputRequests["k"] = json.RawMessage(`{"changed":true}`) // the store keeps its own copy

	got, err := s.Get(ctx, tid("t1"))
	require.NoError(t, err)
	assert.Equal(t, "client-a", got.Scope)
	assert.JSONEq(t, `{"method":"elicitation/create","params":{}}`, string(got.InputRequests["k"]))

	_, err = s.Get(ctx, tid("nope"))
	assert.ErrorIs(t, err, ErrNotFound)

	// Concurrent updates all land.
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			_, err := s.Update(ctx, tid("t1"), func(t *Task) error {
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
	got, err = s.Get(ctx, tid("t1"))
	require.NoError(t, err)
	assert.Len(t, got.InputResponses, 8)

	// A change that fails stores nothing.
	boom := errors.New("boom")
	_, err = s.Update(ctx, tid("t1"), func(t *Task) error { t.Status = StatusFailed; return boom })
	assert.ErrorIs(t, err, boom)
	got, _ = s.Get(ctx, tid("t1"))
	assert.Equal(t, StatusWorking, got.Status)

	big := make([]byte, 0, 300<<10)
	big = append(big, `{"content":[{"type":"text","text":"`...)
	for len(big) < 300<<10 {
		big = append(big, 'x')
	}
	big = append(big, `"}]}`...)
	upd, err := s.Update(ctx, tid("t1"), func(t *Task) error { t.Status, t.Result = StatusCompleted, big; return nil })
	require.NoError(t, err)
	assert.Equal(t, StatusCompleted, upd.Status)
	got, err = s.Get(ctx, tid("t1"))
	require.NoError(t, err)
	assert.Equal(t, string(big), string(got.Result), "a large result is kept whole")

	// Expiry.
	advance(2 * time.Minute)
	_, err = s.Get(ctx, tid("t1"))
	assert.ErrorIs(t, err, ErrNotFound, "an expired task is gone")
	_, err = s.Update(ctx, tid("t1"), func(*Task) error { return nil })
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
// expire, saying which limit was reached.
func TestMemoryStoreIsBounded(t *testing.T) {
	now := time.Now()
	s := NewMemoryWith(func() time.Time { return now }, MemoryLimits{Tasks: 3, TasksPerOwner: 2})
	ctx := context.Background()
	for i := range 3 {
		require.NoError(t, s.Create(ctx, &Task{ID: fmt.Sprint(i), Owner: owner.ID(fmt.Sprint("o", i%2)), Created: now, TTL: time.Duration(i+1) * time.Minute}))
	}
	var le *owner.LimitError
	require.ErrorAs(t, s.Create(ctx, &Task{ID: "more", Owner: "o9", Created: now, TTL: time.Hour}), &le)
	assert.True(t, le.Global)
	assert.Contains(t, le.Error(), "too many kept tasks on this server (the limit is 3)")
	now = now.Add(90 * time.Second) // task 0 has expired
	require.NoError(t, s.Create(ctx, &Task{ID: "more", Owner: "o9", Created: now, TTL: time.Hour}))
	require.ErrorAs(t, s.Create(ctx, &Task{ID: "again", Owner: "o9", Created: now, TTL: time.Hour}), &le)
}

// TestMemoryStoreCountsPerOwner: one owner cannot fill the store: past its
// own limit it is refused, naming the limit, while another owner is not.
func TestMemoryStoreCountsPerOwner(t *testing.T) {
	now := time.Now()
	s := NewMemoryWith(func() time.Time { return now }, MemoryLimits{Tasks: 100, TasksPerOwner: 2})
	ctx := context.Background()
	for i := range 2 {
		require.NoError(t, s.Create(ctx, &Task{ID: fmt.Sprint("a", i), Owner: "key:a", Created: now, TTL: time.Hour}))
	}
	err := s.Create(ctx, &Task{ID: "a2", Owner: "key:a", Created: now, TTL: time.Hour})
	var le *owner.LimitError
	require.ErrorAs(t, err, &le)
	assert.False(t, le.Global)
	assert.Equal(t, "too many kept tasks for this client (the limit is 2); "+SettingMaxTasksPerOwner+" changes it", err.Error())
	_, err = s.Get(ctx, "a2")
	assert.ErrorIs(t, err, ErrNotFound, "a refused task leaves no record")
	require.NoError(t, s.Create(ctx, &Task{ID: "b0", Owner: "key:b", Created: now, TTL: time.Hour}))
}

// TestMemoryStoreBoundsResultBytes: kept results are counted in bytes per
// owner and for all; a result over either budget is refused and nothing of
// it is stored.
func TestMemoryStoreBoundsResultBytes(t *testing.T) {
	now := time.Now()
	s := NewMemoryWith(func() time.Time { return now }, MemoryLimits{ResultBytes: 250, ResultBytesPerOwner: 100})
	ctx := context.Background()
	for _, id := range []string{"a1", "a2", "b1", "c1"} {
		require.NoError(t, s.Create(ctx, &Task{ID: id, Owner: owner.ID(id[:1]), Status: StatusWorking, Created: now, TTL: time.Hour}))
	}
	set := func(id string, n int) error {
		_, err := s.Update(ctx, id, func(t *Task) error {
			t.Status, t.Result = StatusCompleted, json.RawMessage(`"`+strings.Repeat("x", n-2)+`"`)
			return nil
		})
		return err
	}
	require.NoError(t, set("a1", 80))
	err := set("a2", 30)
	var le *owner.LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "too many bytes of kept task results for this client (the limit is 100); "+SettingMaxResultBytesPerOwner+" changes it", err.Error())
	got, err := s.Get(ctx, "a2")
	require.NoError(t, err)
	assert.Equal(t, StatusWorking, got.Status, "nothing of the refused change is stored")
	require.NoError(t, set("b1", 100))
	require.ErrorAs(t, set("c1", 90), &le)
	assert.True(t, le.Global)
	require.NoError(t, set("c1", 70))
	// Replacing a result counts the new size only.
	require.NoError(t, set("a1", 20))
	require.NoError(t, set("a2", 60))
}

// TestMemoryStoreRemovesExpiredOnTime: an expired record leaves the store
// (and gives back what it counted) when it expires, not at the next sweep.
func TestMemoryStoreRemovesExpiredOnTime(t *testing.T) {
	s := NewMemoryWith(nil, MemoryLimits{Tasks: 10, TasksPerOwner: 10, ResultBytes: 1000, ResultBytesPerOwner: 1000})
	ctx := context.Background()
	now := time.Now()
	require.NoError(t, s.Create(ctx, &Task{ID: "short", Owner: "o", Created: now, TTL: 50 * time.Millisecond, Result: json.RawMessage(`"xxxxxxxx"`)}))
	require.NoError(t, s.Create(ctx, &Task{ID: "long", Owner: "o", Created: now, TTL: time.Hour}))
	assert.Equal(t, 2, s.Len())
	require.Eventually(t, func() bool { return s.Len() == 1 }, 10*time.Second, 10*time.Millisecond, "removed without a sweep")
	assert.Equal(t, int64(0), s.results.Total(), "its result bytes are given back")
	assert.Equal(t, int64(1), s.kept.Held("o"))
}

// TestMemoryStoreSharesResults: every reader gets the one copy of a kept
// result, never a copy of its own.
func TestMemoryStoreSharesResults(t *testing.T) {
	s := NewMemory(nil)
	ctx := context.Background()
	now := time.Now()
	require.NoError(t, s.Create(ctx, &Task{ID: "t", Owner: "o", Created: now, TTL: time.Hour}))
	_, err := s.Update(ctx, "t", func(t *Task) error {
		t.Status, t.Result = StatusCompleted, json.RawMessage(`"`+strings.Repeat("x", 1<<20)+`"`)
		return nil
	})
	require.NoError(t, err)
	a, err := s.Get(ctx, "t")
	require.NoError(t, err)
	b, err := s.Get(ctx, "t")
	require.NoError(t, err)
	assert.Same(t, unsafe.SliceData(a.Result), unsafe.SliceData(b.Result), "one result for every reader")
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
	require.NoError(t, s.Create(ctx, &Task{ID: tid("shared"), Scope: "c", Status: StatusWorking, Created: t0, Updated: t0, TTL: time.Hour}))
	got, err := other.Get(ctx, tid("shared"))
	require.NoError(t, err)
	assert.Equal(t, StatusWorking, got.Status)
	require.NoError(t, other.Sweep(ctx, t0.Add(2*time.Hour)))
	_, err = other.Get(ctx, tid("shared"))
	assert.ErrorIs(t, err, ErrNotFound)
}

// tid is a task id of the form the host makes (see NewID) starting with
// name, lower-case letters and digits.
func tid(name string) string { return name + strings.Repeat("0", idLength-len(name)) }

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
			return &Task{ID: tid(fmt.Sprintf("%s%d", strings.ToLower(size.name), n)), Scope: "c", Status: StatusWorking,
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

// countingTransport sends a store's requests and counts them by method.
type countingTransport struct {
	mu     sync.Mutex
	counts map[string]int
}

func (c *countingTransport) Do(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	if c.counts == nil {
		c.counts = map[string]int{}
	}
	c.counts[r.Method]++
	if strings.Contains(r.URL.Path, "/"+DefaultContainer+"/") {
		c.counts["blob "+r.Method]++
	}
	c.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// writes returns the requests that change storage, and starts counting
// again.
func (c *countingTransport) writes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for m, k := range c.counts {
		if m != http.MethodGet && m != http.MethodHead && !strings.HasPrefix(m, "blob ") {
			n += k
		}
	}
	c.counts = nil
	return n
}

// finishedBigTask stores a completed task with a result of n bytes.
func finishedBigTask(t *testing.T, s Store, id string, n int) json.RawMessage {
	t.Helper()
	now := time.Now()
	result := json.RawMessage(`{"content":[{"type":"text","text":"` + strings.Repeat("x", n) + `"}]}`)
	require.NoError(t, s.Create(t.Context(), &Task{ID: id, Scope: "c", Status: StatusWorking, Created: now, Updated: now, TTL: time.Hour}))
	_, err := s.Update(t.Context(), id, func(t *Task) error { t.Status, t.Result = StatusCompleted, result; return nil })
	require.NoError(t, err)
	return result
}

// TestAzureStoreWritesNothingWhenNothingChanges: cancels and updates of a
// finished 4 MB task (the finding: 8 MB of storage traffic per request, and
// readers failing on a blob deleted under them) write nothing, and every
// reader meanwhile reads the task whole.
func TestAzureStoreWritesNothingWhenNothingChanges(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	ct := &countingTransport{}
	s, err := NewAzure(t.Context(), az.ConnectionString(), &AzureOptions{Transport: ct})
	require.NoError(t, err)
	result := finishedBigTask(t, s, tid("done"), 4<<20)
	ct.writes()
	for range 4 {
		_, err := s.Update(t.Context(), tid("done"), func(t *Task) error { return nil })
		require.NoError(t, err)
	}
	ct.mu.Lock()
	assert.Zero(t, ct.counts["blob GET"], "an update does not read the result")
	ct.mu.Unlock()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 32 {
		wg.Go(func() {
			_, err := s.Update(t.Context(), tid("done"), func(t *Task) error { return nil }) // a cancel of a finished task
			errs <- err
		})
		if i%4 != 0 {
			continue
		}
		wg.Go(func() {
			got, err := s.Get(t.Context(), tid("done"))
			if err == nil && len(got.Result) != len(result) {
				err = fmt.Errorf("read %d bytes of the result", len(got.Result))
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	assert.Zero(t, ct.writes(), "no storage write when nothing changes")
}

// TestAzureStoreReadersSurviveWriters: concurrent writers changing a task
// with a large result (status messages, conditional on the ETag) never
// make a reader fail, and do not copy the result again.
func TestAzureStoreReadersSurviveWriters(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	ct := &countingTransport{}
	s, err := NewAzure(t.Context(), az.ConnectionString(), &AzureOptions{Transport: ct})
	require.NoError(t, err)
	result := finishedBigTask(t, s, tid("busy"), 1<<20)
	ct.writes()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 8 {
		wg.Go(func() {
			_, err := s.Update(t.Context(), tid("busy"), func(t *Task) error { t.StatusMessage = fmt.Sprint("note ", i); return nil })
			errs <- err
		})
		wg.Go(func() {
			got, err := s.Get(t.Context(), tid("busy"))
			if err == nil && string(got.Result) != string(result) {
				err = fmt.Errorf("read %d bytes of the result", len(got.Result))
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
	ct.mu.Lock()
	puts := ct.counts["blob PUT"]
	ct.mu.Unlock()
	assert.Zero(t, puts, "the result's blob is not written again")
}

// TestAzureStoreRecreatesWhatStorageLost: the storage restarted empty (its
// table and container gone): the next task is stored without a restart of
// the store, big result included.
func TestAzureStoreRecreatesWhatStorageLost(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	s, err := NewAzure(t.Context(), az.ConnectionString(), nil)
	require.NoError(t, err)
	az.Stop()
	az.Start()
	_, err = s.Get(t.Context(), tid("nothing"))
	assert.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, s.Sweep(t.Context(), time.Now()))
	result := finishedBigTask(t, s, tid("after"), 100<<10)
	got, err := s.Get(t.Context(), tid("after"))
	require.NoError(t, err)
	assert.Equal(t, string(result), string(got.Result))
}

// TestAzureStoreCountsPerOwner: the Azure store bounds the unexpired tasks
// this instance makes per owner, naming the limit; a refused task is not
// stored, and an expired one is given back.
func TestAzureStoreCountsPerOwner(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	s, err := NewAzure(t.Context(), az.ConnectionString(), &AzureOptions{TasksPerOwner: 2})
	require.NoError(t, err)
	now := time.Now()
	task := func(id string, ttl time.Duration) *Task {
		return &Task{ID: id, Scope: "c", Owner: "key:m", Status: StatusWorking, Created: now, Updated: now, TTL: ttl}
	}
	require.NoError(t, s.Create(t.Context(), task(tid("m1"), 100*time.Millisecond)))
	require.NoError(t, s.Create(t.Context(), task(tid("m2"), time.Hour)))
	err = s.Create(t.Context(), task(tid("m3"), time.Hour))
	var le *owner.LimitError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "too many kept tasks for this client (the limit is 2); "+SettingMaxTasksPerOwner+" changes it", err.Error())
	_, err = s.Get(t.Context(), tid("m3"))
	assert.ErrorIs(t, err, ErrNotFound, "a refused task is not stored")
	require.Eventually(t, func() bool { return s.kept.c.Held("key:m") == 1 }, 10*time.Second, 10*time.Millisecond, "m1 expired")
	require.NoError(t, s.Create(t.Context(), task(tid("m3"), time.Hour)))
}

// TestAzureStoreRefusesMalformedIDs (issue 25, finding 13): a task id that
// is not of the form the host makes (a client sent "a/b", which cost a
// storage read answered 500) is not found without any storage call.
func TestAzureStoreRefusesMalformedIDs(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	ct := &countingTransport{}
	s, err := NewAzure(t.Context(), az.ConnectionString(), &AzureOptions{Transport: ct})
	require.NoError(t, err)
	ct.mu.Lock()
	ct.counts = nil
	ct.mu.Unlock()
	for _, id := range []string{"a/b", "", "../" + tid("x"), tid("x") + "0", strings.ToUpper(tid("x")), "x'or'1'eq'1", tid("x")[1:] + "/"} {
		_, err := s.Get(t.Context(), id)
		assert.ErrorIs(t, err, ErrNotFound, "%q", id)
		_, err = s.Update(t.Context(), id, func(*Task) error { return nil })
		assert.ErrorIs(t, err, ErrNotFound, "%q", id)
		now := time.Now()
		assert.Error(t, s.Create(t.Context(), &Task{ID: id, Scope: "c", Status: StatusWorking, Created: now, Updated: now, TTL: time.Hour}), "%q", id)
	}
	ct.mu.Lock()
	defer ct.mu.Unlock()
	assert.Empty(t, ct.counts, "no storage call")
}

// TestAzureStoreExpiredReadIsGone (issue 25, finding 3): a read of an
// expired task finds it gone and removes its row and blobs at once, before
// any sweep; neither Get nor Update serves what expired.
func TestAzureStoreExpiredReadIsGone(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	var mu sync.Mutex
	skew := time.Duration(0)
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return time.Now().Add(skew) }
	ct := &countingTransport{}
	s, err := NewAzure(t.Context(), az.ConnectionString(), &AzureOptions{Now: now, Transport: ct})
	require.NoError(t, err)
	other, err := NewAzure(t.Context(), az.ConnectionString(), nil) // another instance, on the real clock
	require.NoError(t, err)
	for _, name := range []string{"small", "big"} {
		t.Run(name, func(t *testing.T) {
			id := tid("expired" + name)
			created := now()
			require.NoError(t, s.Create(t.Context(), &Task{ID: id, Scope: "c", Status: StatusWorking, Created: created, Updated: created, TTL: time.Minute}))
			size := 10
			if name == "big" {
				size = 2 * maxInlineRecord
			}
			result := json.RawMessage(`"` + strings.Repeat("x", size) + `"`)
			_, err := s.Update(t.Context(), id, func(t *Task) error { t.Status, t.Result = StatusCompleted, result; return nil })
			require.NoError(t, err)
			got, err := other.Get(t.Context(), id)
			require.NoError(t, err)
			require.Equal(t, string(result), string(got.Result))
			blobs := s.blobNames(t, id)
			if name == "big" {
				require.NotEmpty(t, blobs)
			}

			mu.Lock()
			skew += 2 * time.Minute
			mu.Unlock()
			_, err = s.Update(t.Context(), id, func(t *Task) error { t.StatusMessage = "late"; return nil })
			assert.ErrorIs(t, err, ErrNotFound, "an expired task is not written")
			_, err = s.Get(t.Context(), id)
			assert.ErrorIs(t, err, ErrNotFound)
			// The row went with the read: the other instance, whose clock
			// does not say it expired, finds nothing either.
			_, err = other.Get(t.Context(), id)
			assert.ErrorIs(t, err, ErrNotFound, "the expired row was removed by the read")
			assert.Empty(t, s.blobNames(t, id), "and its blobs")
			mu.Lock()
			skew = 0
			mu.Unlock()
		})
	}
}

// blobNames lists the blobs of task id.
func (s *Azure) blobNames(t *testing.T, id string) []string {
	t.Helper()
	prefix := id + "/"
	pager := s.blobs.NewListBlobsFlatPager(s.container, &azblob.ListBlobsFlatOptions{Prefix: &prefix})
	var names []string
	for pager.More() {
		page, err := pager.NextPage(t.Context())
		require.NoError(t, err)
		for _, b := range page.Segment.BlobItems {
			names = append(names, *b.Name)
		}
	}
	return names
}

// TestAzureStoreReadersShareAResult (issue 25, finding 3, the Azure
// store): readers of a large result at once, and those after them, share
// one download and one copy of it; each tasks/get downloaded a copy of
// its own.
func TestAzureStoreReadersShareAResult(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	ct := &countingTransport{}
	s, err := NewAzure(t.Context(), az.ConnectionString(), &AzureOptions{Transport: ct})
	require.NoError(t, err)
	id := tid("shared")
	result := finishedBigTask(t, s, id, 4<<20)
	ct.writes()
	got := make([]*Task, 16)
	errs := make([]error, 16)
	var wg sync.WaitGroup
	for i := range got {
		wg.Go(func() { got[i], errs[i] = s.Get(t.Context(), id) })
	}
	wg.Wait()
	later, err := s.Get(t.Context(), id)
	require.NoError(t, err)
	for i := range got {
		require.NoError(t, errs[i])
		assert.Equal(t, len(result), len(got[i].Result))
		assert.Same(t, unsafe.SliceData(later.Result), unsafe.SliceData(got[i].Result), "one copy for every reader")
	}
	assert.Equal(t, string(result), string(later.Result))
	ct.mu.Lock()
	assert.Equal(t, 1, ct.counts["blob GET"], "one download")
	ct.mu.Unlock()
}
