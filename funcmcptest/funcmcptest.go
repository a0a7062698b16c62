package funcmcptest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/funcmcp/funcmcp/host"
	"github.com/funcmcp/funcmcp/serve"
	"github.com/funcmcp/funcmcp/worker"
)

// Options configure [Start] and [NewServer]. A nil *Options means the
// defaults.
type Options struct {
	// Dir holds the host.json and local.settings.json the server reads
	// (each copied into a folder of the server's own, where the host keeps
	// what it writes); "" means the working folder. Without a host.json the
	// server serves with anonymous access and no other setting.
	Dir string
	// Host, when set, are further options of the host (limits, timeouts,
	// a logger); its ScriptRoot, Addr, Functions and WorkerHandler are the
	// server's own.
	Host *host.Options
}

// Server is an app's MCP front on an httptest server.
type Server struct {
	// URL is the MCP endpoint, http://127.0.0.1:PORT/runtime/webhooks/mcp.
	URL string
	// Key is the function key the endpoint accepts (in the
	// x-functions-key header) when host.json asks for one; [Server.Client]
	// sends it.
	Key string
	// Host is the host behind the endpoint.
	Host *host.Host

	srv  *httptest.Server
	root string
}

// anonymousHost is the host.json of a folder that has none.
const anonymousHost = `{"version":"2.0","extensions":{"mcp":{"system":{"webhookAuthorizationLevel":"Anonymous"}}}}`

// Start serves app as [NewServer] does, fails tb when it cannot, and closes
// the server when tb's test ends.
func Start(tb testing.TB, app *worker.App, opts *Options) *Server {
	tb.Helper()
	s, err := NewServer(app, opts)
	if err != nil {
		tb.Fatalf("funcmcptest: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// NewServer serves app's MCP front on a new httptest server: the app's
// configuration must build (its problems are returned), and its
// host.json, when there is one, must load. Close it when done.
func NewServer(app *worker.App, opts *Options) (*Server, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	var ho host.Options
	if o.Host != nil {
		ho = *o.Host
	}
	root, err := os.MkdirTemp("", "funcmcptest-")
	if err != nil {
		return nil, fmt.Errorf("making the server's folder: %w", err)
	}
	s := &Server{root: root}
	if err := copySettings(o.Dir, root); err != nil {
		s.Close()
		return nil, err
	}
	if ho.MasterKey == "" {
		ho.MasterKey = randomKey()
	}
	if ho.SystemKey == "" {
		ho.SystemKey = randomKey()
	}
	if ho.Logger == nil {
		ho.Logger = slog.New(slog.DiscardHandler)
	}
	if ho.Output == nil {
		ho.Output = io.Discard
	}
	ho.ScriptRoot, ho.Addr = root, ""
	h, err := serve.New(app, &ho)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.Host, s.Key = h, ho.MasterKey
	s.srv = httptest.NewServer(h.Handler())
	s.URL = s.srv.URL + host.MCPPath
	return s, nil
}

// Close stops the server and the host, and removes the server's folder.
// It may be called more than once.
func (s *Server) Close() {
	if s.srv != nil {
		s.srv.Close()
		s.srv = nil
	}
	if s.Host != nil {
		_ = s.Host.Close()
	}
	if s.root != "" {
		_ = os.RemoveAll(s.root)
		s.root = ""
	}
}

// Client returns an HTTP client for the endpoint that sends [Server.Key]
// with every request: give it to an MCP client (the Go SDK's
// StreamableClientTransport.HTTPClient).
func (s *Server) Client() *http.Client {
	return &http.Client{Transport: keyTransport{key: s.Key, next: http.DefaultTransport}}
}

// keyTransport adds the function key to each request.
type keyTransport struct {
	key  string
	next http.RoundTripper
}

func (t keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("x-functions-key", t.key)
	return t.next.RoundTrip(r)
}

// copySettings copies host.json (else writes anonymousHost) and
// local.settings.json from dir ("": the working folder) into root.
func copySettings(dir, root string) error {
	for _, name := range []string{"host.json", "local.settings.json"} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		switch {
		case errors.Is(err, fs.ErrNotExist) && name == "host.json":
			data = []byte(anonymousHost)
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return fmt.Errorf("reading the app's %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(root, name), data, 0o600); err != nil {
			return fmt.Errorf("copying the app's %s: %w", name, err)
		}
	}
	return nil
}

// randomKey is a new function key.
func randomKey() string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
