package testutil

import (
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// AzuriteStorage is Azurite's blob and table services (and its queue
// service, which the same program starts) running on free loopback ports,
// in memory, for the test that started them.
type AzuriteStorage struct {
	BlobPort, QueuePort, TablePort int
	cmd                            *exec.Cmd
	done                           chan struct{}
	out                            *SyncBuffer
}

// StartAzuriteStorage starts Azurite with every service (tests/node's
// azurite package on its Node.js 22) and stops it when the test ends. Like
// [StartAzurite] it skips under -short, and fails otherwise, when the
// package is not installed.
func StartAzuriteStorage(t testing.TB, repoRoot string) *AzuriteStorage {
	t.Helper()
	node, dir := RequireNodePackages(t, repoRoot, "azurite")
	a := &AzuriteStorage{BlobPort: FreePort(t), QueuePort: FreePort(t), TablePort: FreePort(t), out: &SyncBuffer{}, done: make(chan struct{})}
	a.cmd = exec.Command(node, filepath.Join(dir, "node_modules", "azurite", "dist", "src", "azurite.js"),
		"--blobHost", "127.0.0.1", "--blobPort", strconv.Itoa(a.BlobPort),
		"--queueHost", "127.0.0.1", "--queuePort", strconv.Itoa(a.QueuePort),
		"--tableHost", "127.0.0.1", "--tablePort", strconv.Itoa(a.TablePort),
		"--inMemoryPersistence", "--skipApiVersionCheck", "--disableTelemetry", "--silent")
	a.cmd.Dir = t.TempDir()
	a.cmd.Stdout, a.cmd.Stderr = a.out, a.out
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := a.cmd.Start(); err != nil {
		t.Fatalf("starting Azurite: %v", err)
	}
	go func() { _ = a.cmd.Wait(); close(a.done) }()
	t.Cleanup(a.stop)
	deadline := time.Now().Add(30 * time.Second)
	for _, port := range []int{a.BlobPort, a.QueuePort, a.TablePort} {
		for {
			c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-a.done:
				t.Fatalf("Azurite exited before listening:\n%s", a.out.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("Azurite did not listen on port %d within 30s:\n%s", port, a.out.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return a
}

// ConnectionString is an AzureWebJobsStorage value for this emulator.
func (a *AzuriteStorage) ConnectionString() string {
	return fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=%s;"+
		"BlobEndpoint=http://127.0.0.1:%d/devstoreaccount1;QueueEndpoint=http://127.0.0.1:%d/devstoreaccount1;TableEndpoint=http://127.0.0.1:%d/devstoreaccount1",
		AzuriteAccountKey, a.BlobPort, a.QueuePort, a.TablePort)
}

// stop kills the emulator (the process group this helper started).
func (a *AzuriteStorage) stop() {
	_ = syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-a.done:
	case <-time.After(10 * time.Second):
	}
}
