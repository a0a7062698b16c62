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

// AzuriteAccountKey is the storage emulator's well-known account key.
const AzuriteAccountKey = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

// Azurite is the storage emulator's queue service, run from tests/node on
// 127.0.0.1 with in-memory persistence.
type Azurite struct {
	t    testing.TB
	node string
	main string
	dir  string
	Port int
	cmd  *exec.Cmd
	out  *SyncBuffer
	done chan struct{}
}

// StartAzurite starts the queue service of the Azurite that `npm ci`
// installed in tests/node (under repoRoot) on a free loopback port; it is
// stopped when the test ends. The test fails when Azurite is not installed.
func StartAzurite(t testing.TB, repoRoot string) *Azurite {
	t.Helper()
	node, nodeDir := RequireNodePackages(t, repoRoot, "azurite")
	a := &Azurite{
		t:    t,
		node: node,
		main: filepath.Join(nodeDir, "node_modules", "azurite", "dist", "src", "queue", "main.js"),
		dir:  t.TempDir(),
	}
	a.Port = FreePort(t)
	a.Start()
	t.Cleanup(a.Stop)
	return a
}

// ConnectionString is the AzureWebJobsStorage value for this emulator.
func (a *Azurite) ConnectionString() string {
	return fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=%s;QueueEndpoint=http://127.0.0.1:%d/devstoreaccount1",
		AzuriteAccountKey, a.Port)
}

// Start (re)starts the emulator on its port, empty, and waits until it
// accepts connections.
func (a *Azurite) Start() {
	a.t.Helper()
	a.cmd = exec.Command(a.node, a.main,
		"--queueHost", "127.0.0.1", "--queuePort", strconv.Itoa(a.Port),
		"--inMemoryPersistence", "--skipApiVersionCheck", "--disableTelemetry", "--silent")
	a.cmd.Dir = a.dir
	a.out = &SyncBuffer{}
	a.cmd.Stdout, a.cmd.Stderr = a.out, a.out
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := a.cmd.Start(); err != nil {
		a.t.Fatalf("starting Azurite: %v", err)
	}
	a.done = make(chan struct{})
	cmd, done := a.cmd, a.done
	go func() { _ = cmd.Wait(); close(done) }()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(a.Port)), time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-done:
			a.t.Fatalf("Azurite exited before listening on port %d:\n%s", a.Port, a.out.String())
		default:
		}
		if time.Now().After(deadline) {
			a.Stop()
			a.t.Fatalf("Azurite did not listen on port %d within 30s:\n%s", a.Port, a.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop kills the emulator (its data goes with it) and waits for it to exit.
func (a *Azurite) Stop() {
	if a.cmd == nil || a.cmd.Process == nil {
		return
	}
	select {
	case <-a.done:
		return
	default:
	}
	_ = syscall.Kill(-a.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-a.done:
	case <-time.After(10 * time.Second):
		a.t.Errorf("Azurite (pid %d) did not exit within 10s of SIGKILL", a.cmd.Process.Pid)
	}
}
