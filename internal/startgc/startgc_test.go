package startgc

import (
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// settings reads the collector's percent and memory limit without changing
// them.
func settings() (percent int, limit int64) {
	percent = debug.SetGCPercent(100)
	debug.SetGCPercent(percent)
	return percent, debug.SetMemoryLimit(-1)
}

// awaitReleased waits (bounded) for the hold to end by itself.
func awaitReleased(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for Held() && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	require.False(t, Held(), "the hold ended by itself")
}

// The helper process reports whether its init held the collector off: the
// parent runs the test binary again with the environment under test.
func TestHelperProcessReport(t *testing.T) {
	if os.Getenv("STARTGC_HELPER") != "1" {
		t.Skip("run by TestInitHolds as a process of its own")
	}
	p, l := settings()
	os.Stdout.WriteString("held=" + map[bool]string{true: "yes", false: "no"}[Held()] + " percent=" + itoa(int64(p)) + " limit=" + itoa(l) + "\n")
}

// itoa writes a memory limit as the helper reports it.
func itoa(n int64) string {
	if n == math.MaxInt64 {
		return "max"
	}
	return strconv.FormatInt(n, 10)
}

// TestInitHolds: a process started with neither GOGC nor GOMEMLIMIT set
// begins with the collector off, bounded by Limit; one started with either
// keeps what it was told.
func TestInitHolds(t *testing.T) {
	var base []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GOGC=") && !strings.HasPrefix(kv, "GOMEMLIMIT=") {
			base = append(base, kv)
		}
	}
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{nil, "held=yes percent=-1 limit=" + itoa(Limit)},
		{[]string{"GOGC=100"}, "held=no percent=100 limit=max"},
		{[]string{"GOGC=off"}, "held=no percent=-1 limit=max"},
		{[]string{"GOMEMLIMIT=1GiB"}, "held=no percent=100 limit=" + itoa(1<<30)},
	} {
		t.Run(strings.Join(append([]string{"env"}, tc.env...), " "), func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcessReport$", "-test.v")
			cmd.Env = append(append(append([]string(nil), base...), "STARTGC_HELPER=1", "GORACE=atexit_sleep_ms=0"), tc.env...)
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, "%s", out)
			assert.Contains(t, string(out), tc.want+"\n")
		})
	}
}

// TestRelease: Release gives back the settings the hold found, and ends it
// once; a second Release changes nothing.
func TestRelease(t *testing.T) {
	Release() // whatever this test binary's own init held
	before := debug.SetGCPercent(150)
	defer debug.SetGCPercent(before)
	prevLimit := debug.SetMemoryLimit(1 << 30)
	defer debug.SetMemoryLimit(prevLimit)

	hold()
	require.True(t, Held())
	p, l := settings()
	assert.Equal(t, -1, p, "the collector is off")
	assert.Equal(t, int64(Limit), l, "bounded by the limit")

	Release()
	assert.False(t, Held())
	p, l = settings()
	assert.Equal(t, 150, p)
	assert.Equal(t, int64(1<<30), l)

	debug.SetGCPercent(170)
	Release()
	p, _ = settings()
	assert.Equal(t, 170, p, "a second Release changes nothing")
}

// TestReleaseKeepsTheProgramsOwn: a percent or limit the program set
// during the hold is not undone by Release.
func TestReleaseKeepsTheProgramsOwn(t *testing.T) {
	Release()
	hold()
	debug.SetGCPercent(50)
	Release()
	p, l := settings()
	assert.Equal(t, 50, p, "the program's percent stays")
	assert.Equal(t, int64(math.MaxInt64), l, "the hold's limit is gone")

	hold()
	debug.SetMemoryLimit(1 << 30)
	Release()
	p, l = settings()
	assert.Equal(t, 50, p, "the percent before the hold is back")
	assert.Equal(t, int64(1<<30), l, "the program's limit stays")
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(math.MaxInt64)
}

// TestFirstCollectionReleases: a start that reaches the limit collects, and
// that collection ends the hold; the rest of the start collects as usual.
func TestFirstCollectionReleases(t *testing.T) {
	Release()
	hold()
	require.True(t, Held())
	runtime.GC() // what reaching the limit starts
	awaitReleased(t)
	p, l := settings()
	assert.Equal(t, 100, p)
	assert.Equal(t, int64(math.MaxInt64), l)
}

// TestHoldEndsByItself: a program that never calls Release has its
// collector back after holdFor.
func TestHoldEndsByItself(t *testing.T) {
	Release()
	defer func(d time.Duration) { holdFor = d }(holdFor)
	holdFor = 20 * time.Millisecond
	hold()
	require.True(t, Held())
	awaitReleased(t)
	p, _ := settings()
	assert.Equal(t, 100, p)
}
