package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// podmanStore is podman with a store of the test's own (vfs: no mounts left
// behind) and the settings of deploy/containers.conf, which let runc run
// containers as root without systemd.
type podmanStore struct {
	args []string // podman and its global flags
	env  []string
}

func newPodmanStore(t *testing.T) *podmanStore {
	t.Helper()
	bin, err := exec.LookPath("podman")
	require.NoError(t, err, "podman is needed to build and run the image (.ci/run installs Debian's podman and runc)")
	dir := t.TempDir()
	p := &podmanStore{
		args: []string{bin, "--root", filepath.Join(dir, "root"), "--runroot", filepath.Join(dir, "run"), "--storage-driver", "vfs"},
		env:  append(os.Environ(), "CONTAINERS_CONF="+filepath.Join(repoRoot(t), "deploy", "containers.conf")),
	}
	t.Cleanup(func() {
		// The store holds read-only layer files: podman removes them.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _ = p.run(ctx, "system", "reset", "--force")
	})
	return p
}

// run runs podman with args and returns its combined output.
func (p *podmanStore) run(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, p.args[0], append(append([]string{}, p.args[1:]...), args...)...)
	cmd.Env = p.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("podman %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// container is one running container of the image, serving on the host's
// network at base.
type container struct {
	name string
	base string
}

// TestContainerImage builds the sample's image with `make image` (FROM
// scratch, out of local files), runs two containers of it on one Azurite,
// as two replicas behind a load balancer would run, and checks:
//   - the image runs as a non-root user and serves MCP by default;
//   - a legacy SSE stream opened on one replica gets the replies to the
//     POSTs sent to the other (the Azure Storage queues backplane);
//   - a Streamable HTTP session begun on one replica goes on on the other;
//   - SIGTERM (podman stop) drains the replica, which exits 0.
func TestContainerImage(t *testing.T) {
	p := newPodmanStore(t)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()

	image := "localhost/funcmcp-sample-test:" + strconv.Itoa(os.Getpid())
	dist := t.TempDir()
	mk := exec.CommandContext(ctx, "make", "image", "DIST="+dist, "IMAGE="+image, "PODMAN="+strings.Join(p.args, " "))
	mk.Dir = repoRoot(t)
	mk.Env = p.env
	out, err := mk.CombinedOutput()
	require.NoError(t, err, "make image:\n%s", out)

	// The image as built: a non-root user, `handler serve` by default.
	inspect, err := p.run(ctx, "image", "inspect", "--format", "{{json .Config}}", image)
	require.NoError(t, err)
	var cfg struct {
		User       string
		Entrypoint []string
		Cmd        []string
		WorkingDir string
	}
	require.NoError(t, json.Unmarshal([]byte(strings.TrimSpace(inspect)), &cfg), inspect)
	assert.Equal(t, "65532:65532", cfg.User)
	assert.Equal(t, []string{"/app/handler"}, cfg.Entrypoint)
	assert.Equal(t, "serve", cfg.Cmd[0], "the image runs handler serve by default: %q", cfg.Cmd)
	assert.Equal(t, "/app", cfg.WorkingDir)

	az := testutil.StartAzurite(t, repoRoot(t))
	env := []string{
		"FUNCMCP_BACKPLANE=azurequeues",
		"FUNCMCP_BACKPLANE_HEARTBEAT=" + testHeartbeat.String(),
		"AzureWebJobsStorage=" + az.ConnectionString(),
		"WEBSITE_AUTH_ENCRYPTION_KEY=" + sharedSessionKey,
	}
	start := func(name string) *container {
		port := testutil.FreePort(t)
		args := []string{"run", "-d", "--name", name, "--network", "host"}
		for _, e := range env {
			args = append(args, "-e", e)
		}
		// The image's default command with the address of this test: both
		// replicas share the host's network, so each takes its own port.
		args = append(args, image, "serve", "--host", "127.0.0.1", "--port", strconv.Itoa(port))
		_, err := p.run(ctx, args...)
		require.NoError(t, err)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if t.Failed() {
				logs, _ := p.run(ctx, "logs", name)
				t.Logf("container %s:\n%s", name, logs)
			}
			_, _ = p.run(ctx, "rm", "--force", "--time", "0", name)
		})
		c := &container{name: name, base: "http://127.0.0.1:" + strconv.Itoa(port)}
		require.Eventually(t, func() bool {
			resp, err := http.Get(c.base + "/admin/host/ping")
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		}, 60*time.Second, 100*time.Millisecond, "container %s never answered its health endpoint", name)
		return c
	}
	a := start(fmt.Sprintf("funcmcp-a-%d", os.Getpid()))
	b := start(fmt.Sprintf("funcmcp-b-%d", os.Getpid()))

	// Who the server runs as, seen from inside: not root.
	top, err := p.run(ctx, "top", a.name, "user")
	require.NoError(t, err)
	assert.Equal(t, []string{"USER", "nonroot"}, strings.Fields(top), "the server's user")

	// Legacy SSE: the stream on a, its POSTs on b.
	st, err := testutil.OpenSSE(ctx, a.base+endpointPath+"/sse", nil)
	require.NoError(t, err)
	t.Cleanup(st.Close)
	post := testutil.OnHost(st.Endpoint, b.base)
	code, body, err := postTo(ctx, post, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"image","version":"1"}}}`)
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, code, body)
	ev, err := st.Next(clientTimeout)
	require.NoError(t, err)
	require.Contains(t, ev.Data, `"id":0,`)
	code, body, err = postTo(ctx, post, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, code, body)
	c := &sseClient{n: 1, stream: st, post: post}
	for id := 1; id <= 3; id++ {
		code, body, err := postTo(ctx, post, callMessage(c.n, id))
		require.NoError(t, err)
		require.Equal(t, http.StatusAccepted, code, body)
		require.NoError(t, c.expectReply(id))
	}

	// Streamable HTTP: initialize on a, call on b with a's session.
	resp, body := sessionPost(ctx, t, a.base+endpointPath, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"image","version":"1"}}}`)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	session := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, session)
	resp, body = sessionPost(ctx, t, b.base+endpointPath, session, callMessage(0, 2))
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	assert.Contains(t, body, `"months":120`, "the tools/call on b of a session begun on a")

	// SIGTERM drains a and it exits 0.
	_, err = p.run(ctx, "stop", "--time", "30", a.name)
	require.NoError(t, err)
	code2, err := p.run(ctx, "inspect", "--format", "{{.State.ExitCode}}", a.name)
	require.NoError(t, err)
	assert.Equal(t, "0", strings.TrimSpace(code2), "a's exit code after SIGTERM")
	logs, err := p.run(ctx, "logs", a.name)
	require.NoError(t, err)
	assert.Contains(t, logs, `msg="stopping: no new connections`, "a logs its graceful stop")
	assert.Contains(t, logs, `msg=stopped`, "a logs its graceful stop")
}
