package tests

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// fromClients are the HTTP clients of clientFrom, by source address.
var fromClients sync.Map

// clientFrom returns an HTTP client whose connections come from the
// loopback address from (all of 127.0.0.0/8 is loopback on Linux); ""
// is http.DefaultClient. A server that authenticates nobody tells its
// clients apart by address only: whatever headers a client sends, it is
// its address.
func clientFrom(from string) *http.Client {
	if from == "" {
		return http.DefaultClient
	}
	if c, ok := fromClients.Load(from); ok {
		return c.(*http.Client)
	}
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 5 * time.Second}
	c := &http.Client{Transport: &http.Transport{Proxy: nil, DialContext: d.DialContext, MaxIdleConnsPerHost: 32, IdleConnTimeout: 30 * time.Second}}
	actual, _ := fromClients.LoadOrStore(from, c)
	return actual.(*http.Client)
}
