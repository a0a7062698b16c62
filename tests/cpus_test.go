package tests

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWorkerSharesTheCPUs: funchost gives its worker half the CPUs (rounded
// up) as GOMAXPROCS, so the two Go runtimes together run no more threads
// than there are CPUs; a GOMAXPROCS in funchost's environment is the user's
// choice and reaches the worker unchanged.
func TestWorkerSharesTheCPUs(t *testing.T) {
	want := os.Getenv("GOMAXPROCS") // the user's choice, when this test has one
	if want == "" {
		want = strconv.Itoa((runtime.GOMAXPROCS(0) + 1) / 2) // the runtime's default, halved
	}
	h := startHostEnv(t, sample(t), []string{"KEEP_FOR_THIS_TEST=1"})
	assert.Equal(t, want, workerEnv(t, workerPid(t, h.cmd.Process.Pid), "GOMAXPROCS"))

	h = startHostEnv(t, sample(t), []string{"GOMAXPROCS=3"})
	assert.Equal(t, "3", workerEnv(t, workerPid(t, h.cmd.Process.Pid), "GOMAXPROCS"))
}

// workerEnv is the value of name in the environment process pid started
// with ("" when it has none).
func workerEnv(t *testing.T, pid int, name string) string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	require.NoError(t, err)
	value := ""
	for _, kv := range bytes.Split(data, []byte{0}) {
		if v, ok := bytes.CutPrefix(kv, []byte(name+"=")); ok {
			value = string(v)
		}
	}
	return value
}
