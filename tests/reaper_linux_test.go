package tests

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reaperArg0 is the argv[0] that starts funchost's reaper mode
// (host/internal/reaper.Arg0).
const reaperArg0 = "funcmcp-worker-reaper"

// initLine is a line of GODEBUG=inittrace=1: one package's init.
var initLine = regexp.MustCompile(`(?m)^init (\S+) @.* ([0-9]+) bytes, [0-9]+ allocs$`)

// TestReaperStartsBeforeTheHostsPackages: funchost's reaper, which lives as
// long as the worker, starts in an init that runs before the inits of the
// packages that make the host (HTTP and RPC stacks, encoders, schema
// compilers, cloud clients): it costs neither their start-up time nor the
// memory they allocate and touch. The worker's exit status passes through.
func TestReaperStartsBeforeTheHostsPackages(t *testing.T) {
	bin := funchost(t)
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer func() { _ = w.Close() }()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	cmd.Args = []string{reaperArg0, "/bin/sh", "-c", "exit 3"}
	cmd.ExtraFiles = []*os.File{r} // fd 3: the control pipe
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err = cmd.Run()
	_ = r.Close()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "the reaper ends as the worker did: %v\n%s", err, stderr.String())
	assert.Equal(t, 3, exit.ExitCode())

	var total int
	var pkgs []string
	for _, m := range initLine.FindAllStringSubmatch(stderr.String(), -1) {
		n, _ := strconv.Atoi(m[2])
		total += n
		pkgs = append(pkgs, m[1])
	}
	require.NotEmpty(t, pkgs, "inittrace lines:\n%s", stderr.String())
	t.Logf("%d inits before the reaper's, %d bytes: %v", len(pkgs), total, pkgs)
	for _, p := range pkgs {
		assert.NotContains(t, []string{"reflect", "fmt", "net", "net/http", "encoding/json", "github.com/funcmcp/funcmcp/metadata"}, p,
			"a package of the host initialised before the reaper")
	}
	// The runtime's own packages and the standard library's leaves allocate
	// a few KiB; the host's packages allocate tens (before this bound, the
	// reaper's init ran after 70 others, which allocated 59 KiB).
	assert.Less(t, total, 16<<10, "bytes the inits before the reaper's allocated")
}
