package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnknownMCPKeys: a key of extensions.mcp (or of an object in it) that
// no host reads is loaded all the same, with a warning naming the nearest
// known key when one is close; a known key in any casing is no warning
// (keys are case-insensitive, as in the Functions host).
func TestUnknownMCPKeys(t *testing.T) {
	for _, tc := range []struct {
		name, mcp string
		want      []string
	}{
		{"a typo", `{"servername_typo":"S"}`,
			[]string{"host.json: extensions.mcp.servername_typo is not a known setting; did you mean serverName?"}},
		{"known keys in other casings", `{"ServerName":"S","SERVERVERSION":"1","instructions":"i","OutputValidation":"warn",` +
			`"inputvalidation":"off","TextCopy":"none","EncryptClientState":false,"MessageOptions":{"UseAbsoluteUriForEndpoint":true},` +
			`"System":{"WEBHOOKAUTHORIZATIONLEVEL":"Anonymous"}}`, nil},
		{"a nested typo", `{"system":{"webhookAuthorisationLevel":"Anonymous"},"messageOptions":{"useAbsoluteUrlForEndpoint":true}}`,
			[]string{
				"host.json: extensions.mcp.system.webhookAuthorisationLevel is not a known setting; did you mean webhookAuthorizationLevel?",
				"host.json: extensions.mcp.messageOptions.useAbsoluteUrlForEndpoint is not a known setting; did you mean useAbsoluteUriForEndpoint?",
			}},
		{"nothing near", `{"colour":"blue","outputvalidaton":"warn"}`,
			[]string{
				"host.json: extensions.mcp.colour is not a known setting (known: serverName, serverVersion, instructions, " +
					"outputValidation, inputValidation, textCopy, system, encryptClientState, messageOptions)",
				"host.json: extensions.mcp.outputvalidaton is not a known setting; did you mean outputValidation?",
			}},
		{"no extensions.mcp", ``, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			doc := `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"handler"}}}`
			if tc.mcp != "" {
				doc = `{"version":"2.0","customHandler":{"description":{"defaultExecutablePath":"handler"}},"extensions":{"mcp":` + tc.mcp + `}}`
			}
			require.NoError(t, os.WriteFile(filepath.Join(root, HostFile), []byte(doc), 0o644))
			cfg, err := Load(root)
			require.NoError(t, err, "an unknown key is no error")
			assert.Equal(t, tc.want, cfg.Warnings)
		})
	}
}

func TestNearest(t *testing.T) {
	known := []string{"serverName", "serverVersion", "instructions", "system"}
	for name, want := range map[string]string{
		"servername_typo": "serverName",   // 5 edits, a third of 15
		"SERVERNAM":       "serverName",   // case does not count
		"instructon":      "instructions", // 2 edits
		"sytem":           "system",
		"colour":          "",
		"x":               "",
	} {
		assert.Equal(t, want, nearest(name, known), name)
	}
	assert.Equal(t, 3, levenshtein("kitten", "sitting"))
	assert.Equal(t, 0, levenshtein("", ""))
	assert.Equal(t, 4, levenshtein("", "abcd"))
}
