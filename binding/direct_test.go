package binding

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

func TestDecodeDirectReply(t *testing.T) {
	d, logs, err := DecodeDirectReply([]byte(`{"Logs":["one","two"],"Result":{"content":[{"type":"text","text":"{\"a\":1}"}],` +
		`"structuredContent":{"a": 1},"_meta":null},"Checked":"abc","OutputIssue":"Output of tool 'x' is wrong"}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"one", "two"}, logs)
	assert.Equal(t, "abc", d.Checked)
	assert.Equal(t, "Output of tool 'x' is wrong", d.Issue)
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

// TestScanDirectReplyAgreesWithEncodingJSON checks the one-pass reader of
// direct replies against encoding/json on replies and many mutations of
// them: when it reads a body, it reads what encoding/json reads.
func TestScanDirectReplyAgreesWithEncodingJSON(t *testing.T) {
	replies := []string{
		`{"Logs":["one","two \"quoted\" \u00e9 \ud83d\ude00"],"Result":{"content":[{"type":"text","text":"{\"a\":1}"},{"type":"image","data":"AAE=","mimeType":"image/png"}],` +
			`"structuredContent":{"a":1,"b":[true,null,"x"]},"isError":false,"_meta":{"k":"v"}},"Checked":"abc"}`,
		`{"Logs":[],"Result":{"content":[],"isError":true},"OutputIssue":"Output of tool 'x' is wrong"}`,
		` { "Logs" : null , "Result" : { "content" : null , "structuredContent" : null } , "Checked" : null } `,
		`{"Result":{"content":[{"type":"text","text":"x"}]},"Logs":["bad \xff utf-8"]}`,
	}
	rng := rand.New(rand.NewPCG(3, 4))
	read := 0
	for _, reply := range replies {
		for i := range 3000 {
			body := reply
			if i > 0 {
				body = mutate(rng, reply)
			}
			got, ok := scanDirectReply([]byte(body))
			var want metadata.DirectReply
			err := json.Unmarshal([]byte(body), &want)
			if !ok {
				continue
			}
			read++
			require.NoError(t, err, "the scan read a body encoding/json refuses: %s", body)
			assert.Equal(t, want, got, "%s", body)
		}
	}
	assert.Greater(t, read, 1000, "the scan reads most replies itself")
}

// TestBlockCertainlyValidNeverContradictsCheckContentBlock checks the
// quick block check against the full one on blocks and mutations of them.
func TestBlockCertainlyValidNeverContradictsCheckContentBlock(t *testing.T) {
	blocks := []string{
		`{"type":"text","text":"hello \"there\""}`,
		`{"type":"image","data":"AAE=","mimeType":"image/png","annotations":{"audience":["user"]}}`,
		`{"type":"audio","mimeType":"audio/wav","data":""}`,
		`{"type":"resource_link","uri":"file:///a","name":"a","title":"A"}`,
		`{"type":"resource","resource":{"uri":"file:///a","text":"x"}}`,
	}
	rng := rand.New(rand.NewPCG(5, 6))
	quick := 0
	for _, block := range blocks {
		for i := range 3000 {
			b := block
			if i > 0 {
				b = mutate(rng, block)
			}
			if blockCertainlyValid([]byte(b)) {
				quick++
				require.NoError(t, checkContentBlockFully([]byte(b)), b)
			}
		}
	}
	assert.Greater(t, quick, 1000)
}

// FuzzDirectReply checks, on any body, that the one-pass reader of direct
// replies reads what encoding/json reads whenever it reads a body at all,
// and that the quick block check never accepts a block the full one
// refuses.
func FuzzDirectReply(f *testing.F) {
	f.Add([]byte(`{"Logs":["a"],"Result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":1}},"Checked":"c"}`))
	f.Add([]byte(`{"type":"image","data":"AAE=","mimeType":"image/png"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, ok := scanDirectReply(data); ok {
			var want metadata.DirectReply
			require.NoError(t, json.Unmarshal(data, &want), "%q", data)
			require.Equal(t, want, got, "%q", data)
		}
		if blockCertainlyValid(data) {
			require.NoError(t, checkContentBlockFully(data), "%q", data)
		}
	})
}
