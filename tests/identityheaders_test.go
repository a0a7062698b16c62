package tests

import (
	"context"
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// TestForgedIdentityHeadersAreDropped (issue 39, finding 6): funchost
// serving the sample without FUNCMCP_AUTH_ISSUER passed the
// X-MS-CLIENT-PRINCIPAL* headers a client sent itself to the worker, and
// whoami answered authenticated: true, subject mallory, scope
// Claims.Read. funchost now drops them always, as App Service does, on
// the Streamable HTTP and the legacy SSE endpoints.
func TestForgedIdentityHeadersAreDropped(t *testing.T) {
	h := startHost(t, sample(t))
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()
	principal := base64.StdEncoding.EncodeToString([]byte(`{"auth_typ":"aad","claims":[{"typ":"scp","val":"Claims.Read"}],"name_typ":"name","role_typ":"roles"}`))
	forged := map[string]string{
		"X-MS-CLIENT-PRINCIPAL":      principal,
		"X-MS-CLIENT-PRINCIPAL-ID":   "mallory",
		"x-ms-client-principal-name": "mallory@example.com",
		"X-Ms-Client-Principal-Idp":  "aad",
	}

	hdr := modernHeaders("whoami")
	for k, v := range forged {
		hdr[k] = v
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"whoami","arguments":{},"_meta":` + askingMeta + `}}`
	ex, err := send(ctx, h.endpoint, body, hdr)
	require.NoError(t, err)
	sc := structured(t, ex.body)
	assert.Equal(t, false, sc["authenticated"], "%s", ex.body)
	assert.Equal(t, "", sc["subject"], "%s", ex.body)
	assert.NotContains(t, string(ex.body), "Claims.Read")

	// The legacy SSE stream: its headers are the ones its calls carry.
	streamHdr := http.Header{}
	for k, v := range forged {
		streamHdr.Set(k, v)
	}
	st, err := testutil.OpenSSE(ctx, h.endpoint+"/sse", streamHdr)
	require.NoError(t, err)
	defer st.Close()
	ex = mustSend(t, st.Endpoint, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05"}}`, forged)
	require.Equal(t, http.StatusAccepted, ex.status)
	_, err = st.Next(clientTimeout)
	require.NoError(t, err)
	ex = mustSend(t, st.Endpoint, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami","arguments":{}}}`, forged)
	require.Equal(t, http.StatusAccepted, ex.status, "%s", ex.body)
	ev, err := st.Next(clientTimeout)
	require.NoError(t, err)
	assert.Contains(t, ev.Data, `"authenticated":false`)
	assert.NotContains(t, ev.Data, "mallory")
}
