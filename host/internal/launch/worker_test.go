package launch

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/metadata"
)

// TestValuesEndWithTheSwitchAndTheChannel: the worker gets the app's
// Values, then (telemetry off) OTEL_SDK_DISABLED=true, then the change
// channel, last, so that each wins over a value of the same name; a
// channel that cannot be offered is given empty.
func TestValuesEndWithTheSwitchAndTheChannel(t *testing.T) {
	cfg := &config.Config{Values: []config.Setting{{Key: "GREETING", Value: "hello"}, {Key: metadata.EnvChangesURL, Value: "http://127.0.0.1:1/stale"}}}
	w := New(&Options{Config: cfg, Changes: func() (string, string) { return "http://127.0.0.1:2/changes", "k" }})
	assert.Equal(t, []config.Setting{
		{Key: "GREETING", Value: "hello"},
		{Key: metadata.EnvChangesURL, Value: "http://127.0.0.1:1/stale"},
		{Key: envSDKDisabled, Value: "true"},
		{Key: metadata.EnvChangesURL, Value: "http://127.0.0.1:2/changes"},
		{Key: metadata.EnvChangesKey, Value: "k"},
	}, w.Values())
	assert.Len(t, cfg.Values, 2, "the app's Values are not changed")

	none := New(&Options{Config: cfg})
	vals := none.Values()
	require.Len(t, vals, 5)
	assert.Equal(t, config.Setting{Key: metadata.EnvChangesURL}, vals[3], "no channel: an inherited value is overridden")
}

// TestSummarizeSaysWhyTheWorkerExportsNothing: a worker funchost does not
// start decides for itself; one it starts with telemetry off exports
// nothing.
func TestSummarizeSaysWhyTheWorkerExportsNothing(t *testing.T) {
	w := New(&Options{Config: &config.Config{}})
	assert.Contains(t, w.Summarize(External).Worker.Reason, "not started by funchost")
	assert.Contains(t, w.Summarize(Started).Worker.Reason, envSDKDisabled+"=true")
	assert.False(t, w.Summarize(Started).On)
}

// An app serving itself is not a worker funchost did not start: the start
// line says the app runs in the host's process, with its switch.
func TestSummarizeAnAppInTheHostsProcess(t *testing.T) {
	w := New(&Options{Config: &config.Config{}})
	s := w.Summarize(InProcess)
	assert.Equal(t, "the app runs in this process, with "+envSDKDisabled+"=true", s.Worker.Reason)
	assert.NotContains(t, s.Text, "not started by funchost")
}
