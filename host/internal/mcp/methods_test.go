package mcp

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestMethodsHaveExamples: every method of the table gives valid example
// params (a JSON object naming its target when it has one), which the
// hostile suite of tests/ fills with hostile values.
func TestMethodsHaveExamples(t *testing.T) {
	specs := Methods()
	assert.Len(t, specs, len(methods))
	for _, m := range specs {
		var params map[string]any
		if !assert.NoError(t, json.Unmarshal([]byte(m.Example), &params), "%s: example params %q", m.Name, m.Example) {
			continue
		}
		if m.NameParam != "" {
			assert.IsType(t, "", params[m.NameParam], "%s: the example names its target in %q", m.Name, m.NameParam)
		}
		assert.True(t, m.Has(m.Since), "%s has its first revision", m.Name)
	}
}
