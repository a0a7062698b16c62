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

// Azurite is the storage emulator's queue and blob services (and its
// table service, which the same program starts), run from tests/node on
// 127.0.0.1 with in-memory persistence.
type Azurite struct {
	t    testing.TB
	node string
	main string
	dir  string
	opts AzuriteOptions
	// Port is the queue service's, BlobPort the blob service's.
	Port, BlobPort, tablePort int
	cmd                       *exec.Cmd
	out                       *SyncBuffer
	done                      chan struct{}
}

// AzuriteOptions configures [StartAzuriteWith].
type AzuriteOptions struct {
	// CertFile and KeyFile (PEM) make the services HTTPS.
	CertFile, KeyFile string
	// OAuth accepts Microsoft Entra bearer tokens (Azurite's "basic"
	// check: audience, issuer and lifetime, not the signature); it needs
	// HTTPS.
	OAuth bool
}

// StartAzurite starts the queue, blob and table services of the Azurite that `npm
// ci` installed in tests/node (under repoRoot) on free loopback ports; it
// is stopped when the test ends. The test fails when Azurite is not
// installed.
func StartAzurite(t testing.TB, repoRoot string) *Azurite {
	t.Helper()
	return StartAzuriteWith(t, repoRoot, AzuriteOptions{})
}

// StartAzuriteWith is StartAzurite with options.
func StartAzuriteWith(t testing.TB, repoRoot string, o AzuriteOptions) *Azurite {
	t.Helper()
	node, nodeDir := RequireNodePackages(t, repoRoot, "azurite")
	a := &Azurite{
		t:    t,
		node: node,
		main: filepath.Join(nodeDir, "node_modules", "azurite", "dist", "src", "azurite.js"),
		dir:  t.TempDir(),
		opts: o,
	}
	a.Port, a.BlobPort, a.tablePort = FreePort(t), FreePort(t), FreePort(t)
	a.Start()
	t.Cleanup(a.Stop)
	return a
}

func (a *Azurite) scheme() string {
	if a.opts.CertFile != "" {
		return "https"
	}
	return "http"
}

// QueueURL is the queue service's URL (the account's).
func (a *Azurite) QueueURL() string {
	return fmt.Sprintf("%s://127.0.0.1:%d/devstoreaccount1", a.scheme(), a.Port)
}

// TableURL is the table service's URL (the account's).
func (a *Azurite) TableURL() string {
	return fmt.Sprintf("%s://127.0.0.1:%d/devstoreaccount1", a.scheme(), a.tablePort)
}

// BlobURL is the blob service's URL (the account's).
func (a *Azurite) BlobURL() string {
	return fmt.Sprintf("%s://127.0.0.1:%d/devstoreaccount1", a.scheme(), a.BlobPort)
}

// ConnectionString is the AzureWebJobsStorage value for this emulator.
func (a *Azurite) ConnectionString() string {
	return fmt.Sprintf("DefaultEndpointsProtocol=%s;AccountName=devstoreaccount1;AccountKey=%s;QueueEndpoint=%s;BlobEndpoint=%s;TableEndpoint=%s",
		a.scheme(), AzuriteAccountKey, a.QueueURL(), a.BlobURL(), a.TableURL())
}

// Start (re)starts the emulator on its ports, empty, and waits until it
// accepts connections.
func (a *Azurite) Start() {
	a.t.Helper()
	args := []string{a.main,
		"--queueHost", "127.0.0.1", "--queuePort", strconv.Itoa(a.Port),
		"--blobHost", "127.0.0.1", "--blobPort", strconv.Itoa(a.BlobPort),
		"--tableHost", "127.0.0.1", "--tablePort", strconv.Itoa(a.tablePort),
		"--inMemoryPersistence", "--skipApiVersionCheck", "--disableTelemetry", "--silent"}
	if a.opts.CertFile != "" {
		args = append(args, "--cert", a.opts.CertFile, "--key", a.opts.KeyFile)
	}
	if a.opts.OAuth {
		args = append(args, "--oauth", "basic")
	}
	a.cmd = exec.Command(a.node, args...)
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
	for _, port := range []int{a.Port, a.BlobPort, a.tablePort} {
		a.waitFor(port, done, deadline)
	}
}

// waitFor waits until port accepts connections.
func (a *Azurite) waitFor(port int, done chan struct{}, deadline time.Time) {
	a.t.Helper()
	for {
		c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case <-done:
			a.t.Fatalf("Azurite exited before listening on port %d:\n%s", port, a.out.String())
		default:
		}
		if time.Now().After(deadline) {
			a.Stop()
			a.t.Fatalf("Azurite did not listen on port %d within 30s:\n%s", port, a.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Pause stops the emulator's processes (SIGSTOP) without ending them: its
// ports accept connections and answer nothing, as a stalled storage
// account. Resume lets them go on.
func (a *Azurite) Pause() { a.signal(syscall.SIGSTOP) }

// Resume continues an emulator that Pause stopped.
func (a *Azurite) Resume() { a.signal(syscall.SIGCONT) }

func (a *Azurite) signal(sig syscall.Signal) {
	a.t.Helper()
	if err := syscall.Kill(-a.cmd.Process.Pid, sig); err != nil {
		a.t.Errorf("signalling Azurite (pid %d): %v", a.cmd.Process.Pid, err)
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
