package host

import (
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/funcmcp/funcmcp/metadata"
)

// loopbackNames are the host names every listener answers to.
var loopbackNames = []string{"127.0.0.1", "localhost", "::1"}

// guard holds the request checks made before anything else: the Host header
// must name this listener and the Origin, when sent, must be allowed (DNS
// rebinding: a page on evil.example whose name resolves to 127.0.0.1 sends
// Host and Origin evil.example).
type guard struct {
	hosts   []string // allowed host names, lower case, no port
	origins []string // allowed origins (scheme://host[:port]), lower case
}

func newGuard(o *Options) *guard {
	g := &guard{hosts: append([]string(nil), loopbackNames...)}
	for _, h := range o.AllowedHosts {
		if h = strings.ToLower(strings.Trim(strings.TrimSpace(h), "[]")); h != "" {
			g.hosts = append(g.hosts, h)
		}
	}
	for _, origin := range o.AllowedOrigins {
		if origin = strings.ToLower(strings.TrimRight(strings.TrimSpace(origin), "/")); origin != "" {
			g.origins = append(g.origins, origin)
		}
	}
	return g
}

// hostAllowed reports whether a Host header (name[:port]) names the listener.
func (g *guard) hostAllowed(hostport string) bool {
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

// originAllowed reports whether an Origin header may call: one of the
// allowed origins, or any scheme and port on an allowed host name.
func (g *guard) originAllowed(origin string) bool {
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
	return g.hostAllowed(u.Host)
}

// check answers 403 for a request from an unexpected Host or Origin.
func (g *guard) check(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.hostAllowed(r.Host) {
			refuse(w, http.StatusForbidden, "Forbidden: Host not allowed")
			return
		}
		if vals := r.Header["Origin"]; len(vals) > 0 && !g.originAllowed(vals[0]) {
			refuse(w, http.StatusForbidden, "Forbidden: Origin not allowed")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireJSON answers 415 for a POST whose body is not application/json.
func requireJSON(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || mt != "application/json" {
				refuse(w, http.StatusUnsupportedMediaType, "Unsupported Media Type: the body must be application/json")
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// refuse writes a JSON-RPC error without id, as the MCP endpoint does for
// transport-level refusals.
func refuse(w http.ResponseWriter, status int, message string) {
	body, _ := metadata.Marshal(struct {
		JSONRPC string `json:"jsonrpc"`
		ID      any    `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{-32000, message}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
