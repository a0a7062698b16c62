package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

// TestFixtureResourcesAndPrompts reads every resource and gets every prompt
// the suite's scenarios ask for, as the Functions host invokes them, and
// checks the results with what the scenarios check.
func TestFixtureResourcesAndPrompts(t *testing.T) {
	app := newApp()
	fns, err := app.Functions()
	require.NoError(t, err)
	var reg binding.Registry
	for _, f := range fns {
		if ts := f.ResourceTriggers(); len(ts) == 1 {
			r, err := binding.LoadResource(f, ts[0], "")
			require.NoError(t, err)
			require.NoError(t, reg.AddResource(r))
		}
		if ts := f.PromptTriggers(); len(ts) == 1 {
			p, err := binding.LoadPrompt(f, ts[0], "")
			require.NoError(t, err)
			require.NoError(t, reg.AddPrompt(p))
			assert.NotEmpty(t, p.Description, "prompts-list wants a description")
		}
	}
	srv := httptest.NewServer(app.Handler())
	defer srv.Close()
	post := func(function, context string, header map[string]string) json.RawMessage {
		value, _ := json.Marshal(context)
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/"+function, strings.NewReader(fmt.Sprintf(`{"Data":{"context":%s}}`, value)))
		require.NoError(t, err)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
		var out metadata.InvocationResponse
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return out.ReturnValue
	}

	for uri, want := range map[string]string{
		"test://static-text":       `{"contents":[{"uri":"test://static-text","mimeType":"text/plain","text":"This is the content of the static text resource."}]}`,
		"test://template/123/data": `{"contents":[{"uri":"test://template/123/data","mimeType":"application/json","text":"{\"id\":\"123\",\"templateTest\":true,\"data\":\"Data for ID: 123\"}"}]}`,
		"test://watched-resource":  `{"contents":[{"uri":"test://watched-resource","mimeType":"text/plain","text":"This resource is watched for changes."}]}`,
	} {
		r, _, ok := reg.LookupResource(uri)
		require.True(t, ok, uri)
		res, err := r.DecodeReturnValue(post(r.Function, fmt.Sprintf(`{"uri":%q}`, uri), nil), uri)
		require.NoError(t, err)
		data, _ := metadata.Marshal(res)
		assert.Equal(t, want, string(data))
	}
	r, _, _ := reg.LookupResource("test://static-binary")
	res, err := r.DecodeReturnValue(post(r.Function, `{"uri":"test://static-binary"}`, nil), "test://static-binary")
	require.NoError(t, err)
	require.NotNil(t, res.Contents[0].Blob)
	assert.Equal(t, "image/png", res.Contents[0].MimeType)

	for _, tc := range []struct{ name, args, want string }{
		{"test_simple_prompt", `{}`, `"This is a simple prompt for testing."`},
		{"test_prompt_with_arguments", `{"arg1":"testValue1","arg2":"testValue2"}`, `Prompt with arguments: arg1='testValue1', arg2='testValue2'`},
		{"test_prompt_with_embedded_resource", `{"resourceUri":"test://example-resource"}`, `{"type":"resource","resource":{"uri":"test://example-resource","mimeType":"text/plain","text":"Embedded resource content for testing."}}`},
		{"test_prompt_with_image", `{}`, `{"type":"image","data":"`},
	} {
		p, ok := reg.Prompt(tc.name)
		require.True(t, ok, tc.name)
		res, err := p.DecodeReturnValue(post(p.Function, fmt.Sprintf(`{"name":%q,"arguments":%s}`, tc.name, tc.args), nil))
		require.NoError(t, err, tc.name)
		data, _ := metadata.Marshal(res)
		assert.Contains(t, string(data), tc.want, tc.name)
	}

	done, err := binding.DecodeCompletionReturnValue(post("test_prompt_with_arguments",
		`{"ref":{"type":"ref/prompt","name":"test_prompt_with_arguments"},"argument":{"name":"arg1","value":"par"}}`,
		map[string]string{metadata.HeaderMethod: metadata.MethodComplete}))
	require.NoError(t, err)
	assert.Equal(t, []string{"paris", "park", "party"}, done.Completion.Values)
}
