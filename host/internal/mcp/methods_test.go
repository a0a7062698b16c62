package mcp

import (
	"encoding/json"
	"maps"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/funcmcp/funcmcp/metadata"
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

// TestMethodsJoinTheTable: every request of metadata's table is served
// here, in its order; a request without a serve func, or a serve func of
// no request, stops the package from starting.
func TestMethodsJoinTheTable(t *testing.T) {
	var requests []string
	for _, m := range metadata.Methods() {
		if !m.Notification() {
			requests = append(requests, m.Name)
		}
	}
	var served []string
	for _, m := range Methods() {
		served = append(served, m.Name)
	}
	assert.Equal(t, requests, served)

	missing := maps.Clone(serving)
	delete(missing, methodPing)
	assert.PanicsWithValue(t, "mcp: method "+methodPing+" has no serve func", func() { buildMethods(missing) })
	extra := maps.Clone(serving)
	extra["no/such"] = methodInfo{serve: (*handler).servePing}
	assert.Panics(t, func() { buildMethods(extra) })
}
