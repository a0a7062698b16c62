package testutil

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// RedisServer is a redis-server the test started on 127.0.0.1.
type RedisServer struct {
	// Port is the plain port (0 with TLSOnly), TLSPort the TLS one (0
	// without a certificate).
	Port, TLSPort int
	cmd           *exec.Cmd
	done          chan struct{}
	out           *SyncBuffer
}

// RedisOptions configures [StartRedis].
type RedisOptions struct {
	// Password is the default user's password ("" for none).
	Password string
	// Users are extra ACL users: name → password, with every right.
	Users map[string]string
	// Cert serves TLS on TLSPort (redis-server must be built with TLS).
	Cert *TestCert
}

// RedisPath is the redis-server the tests run: $REDIS_SERVER, else the one
// on PATH, else /usr/bin/redis-server.
func RedisPath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("REDIS_SERVER"); p != "" {
		return p
	}
	if p, err := exec.LookPath("redis-server"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/bin/redis-server"); err == nil {
		return "/usr/bin/redis-server"
	}
	if testing.Short() {
		t.Skip("redis-server is not installed (apt-get install -y redis-server)")
	}
	t.Fatal("redis-server is not installed (apt-get install -y redis-server)")
	return ""
}

// StartRedis starts redis-server without persistence on free loopback
// ports; it is killed (by its pid) when the test ends.
func StartRedis(t testing.TB, o RedisOptions) *RedisServer {
	t.Helper()
	bin := RedisPath(t)
	dir := t.TempDir()
	r := &RedisServer{Port: FreePort(t), out: &SyncBuffer{}, done: make(chan struct{})}
	conf := []string{
		"bind 127.0.0.1",
		"port " + strconv.Itoa(r.Port),
		"save \"\"",
		"appendonly no",
		"dir " + dir,
		"protected-mode no",
	}
	if o.Password != "" {
		conf = append(conf, "requirepass "+o.Password)
	}
	for name, pw := range o.Users {
		conf = append(conf, fmt.Sprintf("user %s on >%s ~* &* +@all", name, pw))
	}
	if o.Cert != nil {
		r.TLSPort = FreePort(t)
		conf = append(conf,
			"tls-port "+strconv.Itoa(r.TLSPort),
			"tls-cert-file "+o.Cert.CertFile,
			"tls-key-file "+o.Cert.KeyFile,
			"tls-ca-cert-file "+o.Cert.CertFile,
			"tls-auth-clients no")
	}
	confFile := filepath.Join(dir, "redis.conf")
	if err := os.WriteFile(confFile, []byte(strings.Join(conf, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(bin, confFile)
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := r.cmd.Start(); err != nil {
		t.Fatalf("starting redis-server: %v", err)
	}
	go func() { _ = r.cmd.Wait(); close(r.done) }()
	t.Cleanup(r.Stop)
	deadline := time.Now().Add(20 * time.Second)
	for _, port := range []int{r.Port, r.TLSPort} {
		if port == 0 {
			continue
		}
		for {
			c, err := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), time.Second)
			if err == nil {
				c.Close()
				break
			}
			select {
			case <-r.done:
				if o.Cert != nil && strings.Contains(r.out.String(), "TLS") {
					t.Skipf("redis-server was built without TLS:\n%s", r.out.String())
				}
				t.Fatalf("redis-server exited before listening:\n%s", r.out.String())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("redis-server did not listen on port %d within 20s:\n%s", port, r.out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return r
}

// Addr is 127.0.0.1:<plain port>.
func (r *RedisServer) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.Port)) }

// TLSAddr is 127.0.0.1:<TLS port>.
func (r *RedisServer) TLSAddr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(r.TLSPort)) }

// Stop kills the server it started and waits for it to exit.
func (r *RedisServer) Stop() {
	select {
	case <-r.done:
		return
	default:
	}
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-r.done:
	case <-time.After(10 * time.Second):
	}
}
