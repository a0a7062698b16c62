package host

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// loadCalls and loadConcurrency size TestLoad. Under the race detector the
// host is several times slower, so it makes fewer calls; with -short it
// makes a few hundred, enough to check that every reply is its call's.
const loadConcurrency = 64

func loadCalls() int {
	switch {
	case testing.Short():
		return 500
	case raceEnabled:
		return 10000
	}
	return 20000
}

// openFDs counts the open file descriptors of pid (0: this process).
func openFDs(t *testing.T, pid int) int {
	t.Helper()
	dir := "/proc/self/fd"
	if pid != 0 {
		dir = filepath.Join("/proc", strconv.Itoa(pid), "fd")
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	return len(entries)
}

// TestLoad sends many tools/call at once through the host and a real worker
// process. Every reply must match its request (id and the city echoed in
// structuredContent), and afterwards the host's goroutines, file
// descriptors and heap, and the worker's file descriptors, must be back
// near where they started once the idle connection pools are emptied.
func TestLoad(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("counts file descriptors in /proc")
	}
	root := processApp(t, workerHostJSON)
	writeTool(t, root, "get_weather", &metadata.ToolOptions{ToolName: "get_weather", Description: "Weather.", Properties: cityProperty, OutputSchema: weatherSchema})
	h, _, _, stop := runWorkerHostReady(t, root)
	base := strings.TrimSuffix(h.Endpoint(), MCPPath)
	workerPid := envPid(t, base)
	require.NotZero(t, workerPid)

	transport := &http.Transport{MaxIdleConnsPerHost: loadConcurrency, MaxConnsPerHost: loadConcurrency}
	client := &http.Client{Transport: transport, Timeout: 30 * time.Second}
	call := func(i int) error {
		city := "c" + strconv.Itoa(i)
		req, err := http.NewRequest(http.MethodPost, base+MCPPath, strings.NewReader(callBody(i, "get_weather", `{"city":"`+city+`"}`)))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		req.Header.Set("X-Functions-Key", testKey)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		if err != nil {
			return err
		}
		var reply struct {
			ID     int `json:"id"`
			Result struct {
				IsError           bool `json:"isError"`
				StructuredContent struct {
					City string `json:"city"`
				} `json:"structuredContent"`
			} `json:"result"`
		}
		if err := json.Unmarshal(data, &reply); err != nil {
			return fmt.Errorf("call %d: %w: %s", i, err, data)
		}
		if reply.ID != i || reply.Result.IsError || reply.Result.StructuredContent.City != city {
			return fmt.Errorf("call %d got a reply that is not its own: %s", i, bytes.TrimSpace(data))
		}
		return nil
	}
	// Warm up: connections, pools, the worker.
	for i := range loadConcurrency {
		require.NoError(t, call(i))
	}
	// Idle keep-alive connections are a pool, not a leak: both pools (the
	// client's to the host, the host's to the worker) are emptied before
	// counting.
	settle := func() {
		transport.CloseIdleConnections()
		h.inv.Close()
		runtime.GC()
	}
	// The baseline is taken once the counts stop changing: connections
	// close and goroutines end asynchronously (bounded).
	settle()
	goroutines0, fds0, workerFDs0 := runtime.NumGoroutine(), openFDs(t, 0), openFDs(t, workerPid)
	for range 50 {
		settle()
		g, f, w := runtime.NumGoroutine(), openFDs(t, 0), openFDs(t, workerPid)
		if g == goroutines0 && f == fds0 && w == workerFDs0 {
			break
		}
		goroutines0, fds0, workerFDs0 = g, f, w
		time.Sleep(20 * time.Millisecond) // bounded polling of process-wide counts
	}
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	n := loadCalls()
	start := time.Now()
	next := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range loadConcurrency {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if err := call(i); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := range n {
		next <- loadConcurrency + i
	}
	close(next)
	wg.Wait()
	close(errs)
	elapsed := time.Since(start)
	var failures []error
	for err := range errs {
		failures = append(failures, err)
	}
	require.Empty(t, failures, "%d of %d calls failed; first: %v", len(failures), n, failures)
	t.Logf("%d calls at concurrency %d in %v (%.0f calls/s)", n, loadConcurrency, elapsed.Round(time.Millisecond), float64(n)/elapsed.Seconds())

	settle()
	var after runtime.MemStats
	var goroutines, fds, workerFDs int
	// Connections close and goroutines end asynchronously: wait (bounded).
	deadline := time.Now().Add(10 * time.Second)
	for {
		goroutines, fds, workerFDs = runtime.NumGoroutine(), openFDs(t, 0), openFDs(t, workerPid)
		if (goroutines <= goroutines0+8 && fds <= fds0+4 && workerFDs <= workerFDs0+4) || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
		settle()
	}
	runtime.ReadMemStats(&after)
	t.Logf("goroutines %d → %d, fds %d → %d, worker fds %d → %d, heap in use %d → %d KiB",
		goroutines0, goroutines, fds0, fds, workerFDs0, workerFDs, before.HeapInuse>>10, after.HeapInuse>>10)
	assert.LessOrEqual(t, goroutines, goroutines0+8, "goroutines back near the start")
	assert.LessOrEqual(t, fds, fds0+4, "file descriptors back near the start")
	assert.LessOrEqual(t, workerFDs, workerFDs0+4, "the worker's file descriptors back near the start")
	assert.Less(t, after.HeapInuse, before.HeapInuse+32<<20, "heap in use back within 32 MiB of the start")
	require.NoError(t, stop())
}
