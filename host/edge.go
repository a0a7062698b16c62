package host

import (
	"fmt"
	"net/http"

	"github.com/funcmcp/funcmcp/host/internal/caller"
	"github.com/funcmcp/funcmcp/host/internal/oauth"
	"github.com/funcmcp/funcmcp/host/internal/owner"
)

// SettingTrustedProxies is the app setting naming the front ends (reverse
// proxies, ingresses, load balancers: addresses and CIDR ranges, separated
// by commas) whose X-Forwarded-For names the client address that the
// per-client limits of unauthenticated clients count. Unset: none is
// trusted, and a client's address is its connection's.
const SettingTrustedProxies = owner.SettingTrustedProxies

// loadProxies reads SettingTrustedProxies; nil when it is not set.
func (h *Host) loadProxies() (*owner.Proxies, error) {
	v, from := h.cfg.Lookup(SettingTrustedProxies)
	if v == "" {
		return nil, nil
	}
	p, err := owner.ParseProxies(v)
	if err != nil {
		return nil, fmt.Errorf("reading %s from %s: %w", SettingTrustedProxies, from, err)
	}
	if p != nil {
		h.log.Info("Client addresses are taken from X-Forwarded-For behind the trusted proxies", "proxies", v, "from", from)
	}
	return p, nil
}

// edge is the first link of every endpoint, before anything reads a
// header. It drops the identity headers a client sent
// (X-MS-CLIENT-PRINCIPAL…, X-MS-TOKEN-…), whether or not the host asks
// for access tokens, as App Service drops them: only a verified token sets
// them (the OAuth guard, behind this link). And it makes the request's one
// record of its caller (caller.Caller) with its client address (behind a
// trusted front end, the one X-Forwarded-For names): the OAuth guard and
// the key link fill it, and the MCP endpoint reads it once.
func (h *Host) edge(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		oauth.StripReserved(r.Header)
		next.ServeHTTP(w, caller.Attach(r, caller.New(h.proxies.Client(r))))
	})
}
