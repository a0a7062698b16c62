package metadata

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// encodeTimes wraps v in n levels of JSON string encoding, as the Functions
// host may send a trigger value.
func encodeTimes(t *testing.T, v string, n int) []byte {
	t.Helper()
	data := []byte(v)
	for range n {
		var err error
		data, err = json.Marshal(string(data))
		require.NoError(t, err)
	}
	return data
}

func TestDecodeKindContextsAtAnyDepth(t *testing.T) {
	const resource = `{"uri":"test://template/123/data","sessionid":"s-1","clientinfo":{"name":"c","version":"1"},"transport":{"name":"http-streamable","sessionId":"s-1","properties":{"headers":{"Mcp-Session-Id":"s-1"}}}}`
	const prompt = `{"name":"p","arguments":{"a":"x","n":5,"o":{"k":[1, 2]},"z":null},"sessionid":"s-2"}`
	const completion = `{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"pa"},"context":{"arguments":{"b":"y"}},"sessionid":"s-3"}`
	for depth := range 4 {
		rc, err := DecodeResourceInvocationContext(encodeTimes(t, resource, depth))
		require.NoError(t, err, "depth %d", depth)
		assert.Equal(t, "test://template/123/data", rc.URI)
		assert.Equal(t, "s-1", rc.SessionID)
		assert.Equal(t, &ClientInfo{Name: "c", Version: "1"}, rc.ClientInfo)
		h, ok := rc.Transport.Header("mcp-session-id")
		assert.True(t, ok)
		assert.Equal(t, "s-1", h)

		pc, err := DecodePromptInvocationContext(encodeTimes(t, prompt, depth))
		require.NoError(t, err, "depth %d", depth)
		assert.Equal(t, "p", pc.Name)
		assert.Equal(t, map[string]string{"a": "x", "n": "5", "o": `{"k":[1,2]}`}, pc.StringArguments(),
			"strings give their text, other values their compact JSON, null is left out")

		cc, err := DecodeCompletionContext(encodeTimes(t, completion, depth))
		require.NoError(t, err, "depth %d", depth)
		assert.Equal(t, CompletionRef{Type: RefPrompt, Name: "p"}, cc.Ref)
		assert.Equal(t, CompletionArgument{Name: "a", Value: "pa"}, cc.Argument)
		assert.Equal(t, map[string]string{"b": "y"}, cc.Context.Arguments)
	}
}

func TestDecodeKindContextErrors(t *testing.T) {
	for name, raw := range map[string]string{
		"not an object":   `[1]`,
		"a plain string":  `"hello"`,
		"no uri":          `{"sessionid":"s"}`,
		"uri not string":  `{"uri":5}`,
		"too deep":        string(encodeTimes(t, `{"uri":"a:b"}`, 9)),
		"broken JSON":     `{"uri":`,
		"empty":           ``,
		"string of array": `"[1]"`,
	} {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeResourceInvocationContext([]byte(raw))
			assert.ErrorContains(t, err, "decoding resource invocation context")
		})
	}
	_, err := DecodePromptInvocationContext([]byte(`{"name":"p","arguments":[1]}`))
	assert.ErrorContains(t, err, "decoding prompt invocation context")
	_, err = DecodeCompletionContext([]byte(`{"ref":"x"}`))
	assert.ErrorContains(t, err, "decoding completion context")
}

func TestTriggerValue(t *testing.T) {
	req := &InvocationRequest{Data: map[string]json.RawMessage{"Context": json.RawMessage(`{}`)}}
	raw, err := TriggerValue(req, "context")
	require.NoError(t, err)
	assert.Equal(t, `{}`, string(raw), "matched case-insensitively")
	raw, err = TriggerValue(req, "")
	require.NoError(t, err, "the single entry when no name is given")
	assert.Equal(t, `{}`, string(raw))
	_, err = TriggerValue(req, "other")
	assert.ErrorContains(t, err, `no "other" entry`)
}

// TestResourceContentsBytes pins the bytes the worker sends: the key order
// and spelling the extension's ResourceContents converter reads (it matches
// names exactly: uri, mimeType, text, blob, _meta).
func TestResourceContentsBytes(t *testing.T) {
	text, blob := "a <b> & \"c\"\n", "iVBORw0KGgo="
	for _, tc := range []struct {
		name string
		c    ResourceContents
		want string
	}{
		{"text", ResourceContents{URI: "test://x", MimeType: "text/plain", Text: &text},
			`{"uri":"test://x","mimeType":"text/plain","text":"a <b> & \"c\"\n"}`},
		{"blob", ResourceContents{URI: "test://y", MimeType: "image/png", Blob: &blob},
			`{"uri":"test://y","mimeType":"image/png","blob":"iVBORw0KGgo="}`},
		{"blob wins over text", ResourceContents{URI: "u:x", Text: &text, Blob: &blob}, `{"uri":"u:x","blob":"iVBORw0KGgo="}`},
		{"meta", ResourceContents{URI: "ui://t/view", MimeType: AppViewMimeType, Text: new(string), Meta: json.RawMessage(`{"ui":{"prefersBorder":true}}`)},
			`{"uri":"ui://t/view","mimeType":"text/html;profile=mcp-app","text":"","_meta":{"ui":{"prefersBorder":true}}}`},
		{"no contents", ResourceContents{URI: ""}, `{"uri":""}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, err := Marshal(tc.c)
			require.NoError(t, err)
			assert.Equal(t, tc.want, string(data))
			assert.Equal(t, tc.want, string(tc.c.AppendJSON(nil)))
		})
	}
	assert.Equal(t, `{"type":"resource","resource":{"uri":"test://x","mimeType":"text/plain","text":"a <b> & \"c\"\n"}}`,
		string(EmbeddedResourceContent(ResourceContents{URI: "test://x", MimeType: "text/plain", Text: &text})))
}

func TestEnvelopeBytes(t *testing.T) {
	data, err := Marshal(ResourceResult{Content: `{"uri":"a:b","text":"x"}`})
	require.NoError(t, err)
	assert.Equal(t, `{"content":"{\"uri\":\"a:b\",\"text\":\"x\"}"}`, string(data), "the McpResourceResult shape")

	data, err = Marshal(PromptResult{Content: `{"messages":[]}`, Type: PromptResultTypeGetPromptResult})
	require.NoError(t, err)
	assert.Equal(t, `{"content":"{\"messages\":[]}","type":"get_prompt_result"}`, string(data), "the McpPromptResult shape: content, then type")

	data, err = Marshal(GetPromptResult{Messages: []PromptMessage{{Role: RoleUser, Content: TextContent("hi")}}})
	require.NoError(t, err)
	assert.Equal(t, `{"messages":[{"role":"user","content":{"type":"text","text":"hi"}}]}`, string(data))

	data, err = Marshal(CompleteResult{})
	require.NoError(t, err)
	assert.Equal(t, `{"completion":{"values":[],"hasMore":false}}`, string(data), "values is never null")
	n := 3
	data, err = Marshal(CompleteResult{Completion: CompletionValues{Values: []string{"a"}, Total: &n, HasMore: true}})
	require.NoError(t, err)
	assert.Equal(t, `{"completion":{"values":["a"],"total":3,"hasMore":true}}`, string(data))

	data, err = Marshal(FailureReply{Error: "boom", Code: CodeInternalError})
	require.NoError(t, err)
	assert.Equal(t, `{"error":"boom","code":-32603,"Logs":null}`, string(data))

	data, err = Marshal(FailureReply{Error: "needs sampling", Code: CodeMissingRequiredClientCapability,
		Data: json.RawMessage(`{"requiredCapabilities":{"sampling":{}}}`), Logs: []string{"x"}})
	require.NoError(t, err)
	assert.Equal(t, `{"error":"needs sampling","code":-32021,"data":{"requiredCapabilities":{"sampling":{}}},"Logs":["x"]}`, string(data))
}

// TestOwnedRequestIsHeldNotCopied: the context decoded from a request
// whose Data is Owned holds slices of it; from any other, a copy, which
// outlives a buffer the caller reuses.
func TestOwnedRequestIsHeldNotCopied(t *testing.T) {
	for _, owned := range []bool{false, true} {
		raw := []byte(`{"name":"greet","arguments":{"name":"Ada"}}`)
		req := &InvocationRequest{Data: map[string]json.RawMessage{"context": raw}, Owned: owned}
		c, err := ToolContextFromRequest(req, "context")
		require.NoError(t, err)
		require.Equal(t, `{"name":"Ada"}`, string(c.RawArguments))
		held := &c.RawArguments[0] == &raw[bytes.Index(raw, []byte(`{"name":"Ada"}`))]
		assert.Equal(t, owned, held, "owned %v", owned)
	}
}
