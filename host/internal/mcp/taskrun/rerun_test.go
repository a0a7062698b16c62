package taskrun

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRerunCallKeepsNoCredentials: the call a record keeps for a re-run
// reads back whole, without the client's credentials or access tokens,
// and leaves the caller's headers as they were; a call over
// MaxRerunBytes is not kept.
func TestRerunCallKeepsNoCredentials(t *testing.T) {
	h := http.Header{}
	for _, k := range []string{"Authorization", "Cookie", "X-Functions-Key", "X-MS-TOKEN-AAD-ACCESS-TOKEN", "X-Ms-Client-Principal-Name", "Traceparent"} {
		h.Set(k, "v")
	}
	rc := RerunCall{Arguments: json.RawMessage(`{"n":1}`), ProtocolVersion: "2026-07-28", Headers: h}
	data, err := rc.Encode()
	require.NoError(t, err)
	assert.Len(t, h, 6, "the caller's headers are not changed")

	got, args, err := DecodeRerun(data)
	require.NoError(t, err)
	assert.Equal(t, map[string]json.RawMessage{"n": json.RawMessage("1")}, args)
	assert.Equal(t, "2026-07-28", got.ProtocolVersion)
	assert.Equal(t, http.Header{"X-Ms-Client-Principal-Name": {"v"}, "Traceparent": {"v"}}, got.Headers)

	big := RerunCall{Arguments: json.RawMessage(`"` + strings.Repeat("x", MaxRerunBytes) + `"`)}
	_, err = big.Encode()
	assert.Error(t, err)
	_, _, err = DecodeRerun(json.RawMessage(`{"arguments":[1]}`))
	assert.Error(t, err)
}
