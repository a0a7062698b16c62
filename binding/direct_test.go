package binding

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDecodeDirectReply(t *testing.T) {
	d, logs, err := DecodeDirectReply([]byte(`{"Logs":["one","two"],"Result":{"content":[{"type":"text","text":"{\"a\":1}"}],` +
		`"structuredContent":{"a": 1},"_meta":null},"Checked":"abc"}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"one", "two"}, logs)
	assert.Equal(t, "abc", d.Checked)
	assert.Equal(t, `{"a": 1}`, string(d.Result.StructuredContent), "the bytes are kept as the worker wrote them")
	assert.Nil(t, d.Result.Meta, "null is absent")
	require.Len(t, d.Result.Content, 1)

	d, _, err = DecodeDirectReply([]byte(`{"Logs":[],"Result":{"isError":true}}`))
	require.NoError(t, err)
	assert.Equal(t, []json.RawMessage{}, d.Result.Content, "no content is an empty list")
	assert.True(t, d.Result.IsError)

	for name, body := range map[string]string{
		"not JSON":       `{"Logs":[],"Result":`,
		"no result":      `{"Logs":["x"]}`,
		"bad block":      `{"Result":{"content":[{"type":"text"}]}}`,
		"unknown block":  `{"Result":{"content":[{"type":"video","url":"x"}]}}`,
		"result not obj": `{"Result":[1]}`,
	} {
		_, _, err := DecodeDirectReply([]byte(body))
		var re *ResultError
		assert.True(t, errors.As(err, &re), "%s: %v", name, err)
	}
}
