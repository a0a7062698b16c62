package guard

import (
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/funcmcp/funcmcp/host/internal/jsonrpc"
)

// loopbackNames are the host names every listener answers to.
var loopbackNames = []string{"127.0.0.1", "localhost", "::1"}

// Guard checks the Host and Origin of every request (DNS rebinding: a page
// on evil.example whose name resolves to 127.0.0.1 sends Host and Origin
// evil.example).
type Guard struct {
	hosts   []string // allowed host names, lower case, no port
	origins []string // allowed origins (scheme://host[:port]), lower case
}

// New returns the guard allowing the loopback names plus allowedHosts (host
// names, any port) and allowedOrigins (scheme://host[:port]).
func New(allowedHosts, allowedOrigins []string) *Guard {
	g := &Guard{hosts: append([]string(nil), loopbackNames...)}
	for _, h := range allowedHosts {
		if h = strings.ToLower(strings.Trim(strings.TrimSpace(h), "[]")); h != "" {
			g.hosts = append(g.hosts, h)
		}
	}
	for _, origin := range allowedOrigins {
		if origin = strings.ToLower(strings.TrimRight(strings.TrimSpace(origin), "/")); origin != "" {
			g.origins = append(g.origins, origin)
		}
	}
	return g
}

// HostAllowed reports whether a Host header (name[:port]) names the listener.
func (g *Guard) HostAllowed(hostport string) bool {
	name := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		name = h
	}
	name = strings.ToLower(strings.Trim(name, "[]"))
	for _, h := range g.hosts {
		if name == h {
			return true
		}
	}
	return false
}

// OriginAllowed reports whether an Origin header may call: one of the
// allowed origins, or any http(s) origin on an allowed host name.
func (g *Guard) OriginAllowed(origin string) bool {
	o := strings.ToLower(strings.TrimRight(origin, "/"))
	for _, a := range g.origins {
		if o == a {
			return true
		}
	}
	u, err := url.Parse(o)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return g.HostAllowed(u.Host)
}

// Check answers 403 for a request from an unexpected Host or Origin.
func (g *Guard) Check(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.HostAllowed(r.Host) {
			Refuse(w, http.StatusForbidden, "Forbidden: Host not allowed")
			return
		}
		if vals := r.Header["Origin"]; len(vals) > 0 && !g.OriginAllowed(vals[0]) {
			Refuse(w, http.StatusForbidden, "Forbidden: Origin not allowed")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// RequireJSON answers 415 for a POST whose body is not application/json.
func RequireJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || mt != "application/json" {
				Refuse(w, http.StatusUnsupportedMediaType, "Unsupported Media Type: the body must be application/json")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// Refuse answers status with a JSON-RPC error without id (-32000), as the
// MCP endpoint does for transport-level refusals.
func Refuse(w http.ResponseWriter, status int, message string) {
	_ = jsonrpc.Refuse(w, status, nil, jsonrpc.CodeServerError, message, nil) // no data: nothing to fail
}
