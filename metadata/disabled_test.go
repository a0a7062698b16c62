package metadata

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFunctionDisabled(t *testing.T) {
	settings := map[string]string{
		"AzureWebJobs.off_by_setting.Disabled": "True",
		"AzureWebJobs.on_by_setting.Disabled":  "false",
		"IS_OFF":                               "1",
		"IS_ON":                                "0",
	}
	lookup := func(name string) (string, bool) { v, ok := settings[name]; return v, ok }
	for _, tc := range []struct {
		name, json string
		disabled   bool
		why        string
	}{
		{"plain", `{"bindings":[{"type":"t","name":"n"}]}`, false, ""},
		{"disabled true", `{"bindings":[{"type":"t","name":"n"}],"disabled":true}`, true, `"disabled": true`},
		{"the key is matched exactly", `{"bindings":[{"type":"t","name":"n"}],"Disabled":true}`, false, ""},
		{"disabled false", `{"bindings":[{"type":"t","name":"n"}],"disabled":false}`, false, ""},
		{"names a true setting", `{"bindings":[{"type":"t","name":"n"}],"disabled":"IS_OFF"}`, true, `"IS_OFF"`},
		{"names a false setting", `{"bindings":[{"type":"t","name":"n"}],"disabled":"IS_ON"}`, false, ""},
		{"names no setting", `{"bindings":[{"type":"t","name":"n"}],"disabled":"MISSING"}`, false, ""},
		{"off_by_setting", `{"bindings":[{"type":"t","name":"n"}]}`, true, "AzureWebJobs.off_by_setting.Disabled"},
		{"on_by_setting", `{"bindings":[{"type":"t","name":"n"}]}`, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fn, err := ParseFunction(strings.ReplaceAll(tc.name, " ", "_"), "", []byte(tc.json))
			require.NoError(t, err)
			disabled, why := fn.Disabled(lookup)
			assert.Equal(t, tc.disabled, disabled)
			if tc.why == "" {
				assert.Empty(t, why)
			} else {
				assert.Contains(t, why, tc.why)
			}
		})
	}
	fn, err := ParseFunction("off_by_setting", "", []byte(`{"bindings":[{"type":"t","name":"n"}]}`))
	require.NoError(t, err)
	disabled, _ := fn.Disabled(nil)
	assert.False(t, disabled, "no settings: only function.json decides")
}
