package owner

import (
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseProxies(t *testing.T) {
	p, err := ParseProxies("")
	require.NoError(t, err)
	assert.Nil(t, p, "unset trusts none")

	p, err = ParseProxies("10.0.0.0/8, 192.0.2.1 ::1,fd00::/8")
	require.NoError(t, err)
	for _, a := range []string{"10.1.2.3", "192.0.2.1", "::1", "fd00::5"} {
		assert.True(t, p.Trusts(hostAddr(a)), a)
	}
	for _, a := range []string{"11.0.0.1", "192.0.2.2", "::2"} {
		assert.False(t, p.Trusts(hostAddr(a)), a)
	}
	assert.True(t, p.Trusts(hostAddr("::ffff:10.0.0.1")), "a mapped IPv4 address is the IPv4 one")

	for _, bad := range []string{"10.0.0.0/33", "proxy.example", "1.2.3"} {
		_, err = ParseProxies(bad)
		assert.ErrorContains(t, err, "neither an address nor a CIDR range", bad)
	}
}

// TestProxiesNameTheClient: behind trusted front ends the client is the
// rightmost X-Forwarded-For entry that is not one of them; what the client
// wrote left of it, and anything a connection from elsewhere sends, is
// never believed.
func TestProxiesNameTheClient(t *testing.T) {
	p, err := ParseProxies("10.0.0.0/8")
	require.NoError(t, err)
	for _, c := range []struct {
		name, remote string
		xff          []string
		want         ID
	}{
		{"no front end trusted: the connection", "192.0.2.9:5000", []string{"198.51.100.1"}, "addr:192.0.2.9"},
		{"a trusted front end without the header: itself", "10.0.0.1:5000", nil, "addr:10.0.0.1"},
		{"one proxy", "10.0.0.1:5000", []string{"198.51.100.1"}, "addr:198.51.100.1"},
		{"the client's own entries are not believed", "10.0.0.1:5000", []string{"6.6.6.6, 7.7.7.7, 198.51.100.1"}, "addr:198.51.100.1"},
		{"two proxies", "10.0.0.1:5000", []string{"6.6.6.6, 198.51.100.1, 10.0.0.2"}, "addr:198.51.100.1"},
		{"several header lines", "10.0.0.1:5000", []string{"6.6.6.6", "198.51.100.1", "10.0.0.2"}, "addr:198.51.100.1"},
		{"a port and IPv6", "10.0.0.1:5000", []string{"[2001:db8::1]:443"}, "addr:2001:db8::1"},
		{"garbage where the proxy wrote: the proxy", "10.0.0.1:5000", []string{"198.51.100.1, not-an-address"}, "addr:10.0.0.1"},
		{"only trusted hops: the leftmost", "10.0.0.1:5000", []string{"10.0.0.3, 10.0.0.2"}, "addr:10.0.0.3"},
	} {
		r := httptest.NewRequest("POST", "/x", nil)
		r.RemoteAddr = c.remote
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		assert.Equal(t, c.want, p.Client(r), c.name)
	}
	var none *Proxies
	r := httptest.NewRequest("POST", "/x", nil)
	r.RemoteAddr = "10.0.0.1:5000"
	r.Header.Set("X-Forwarded-For", "198.51.100.1")
	assert.Equal(t, ID("addr:10.0.0.1"), none.Client(r), "by default no front end is trusted")
}

// TestProxiesReadBoundedHops: a long chain of trusted hops is read no
// further than maxForwardedHops.
func TestProxiesReadBoundedHops(t *testing.T) {
	p, err := ParseProxies("10.0.0.0/8")
	require.NoError(t, err)
	r := httptest.NewRequest("POST", "/x", nil)
	r.RemoteAddr = "10.0.0.1:5000"
	xff := "198.51.100.1"
	for range 100 {
		xff += ", 10.9.9.9"
	}
	r.Header.Set("X-Forwarded-For", xff)
	assert.Equal(t, ID("addr:10.9.9.9"), p.Client(r))
}
