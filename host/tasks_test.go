package host

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// taskToolJSON is a function.json of one tool with task declaration decl.
func taskToolJSON(tool, decl string) string {
	return `{"bindings":[{"type":"mcpToolTrigger","direction":"in","name":"context","toolName":"` + tool +
		`","description":"x","task":` + decl + `}]}`
}

// TestTaskDurationsOutOfRangeAreRefused: a tool's task ttlMs or
// pollIntervalMs past its maximum (the finding: 9223372036854775807
// overflowed into a task advertising ttlMs -1 that could not be read) is
// refused at load, naming the function, the tool, the file and the reason.
func TestTaskDurationsOutOfRangeAreRefused(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, HostFile, `{"version":"2.0"}`)
	writeFile(t, root, "huge/function.json", taskToolJSON("huge_ttl", `"{\"support\":\"optional\",\"ttlMs\":9223372036854775807}"`))
	writeFile(t, root, "poll/function.json", taskToolJSON("huge_poll", `"{\"support\":\"optional\",\"pollIntervalMs\":86400001}"`))
	writeFile(t, root, "fine/function.json", taskToolJSON("fine", `"{\"support\":\"optional\",\"ttlMs\":604800000}"`))
	h, logs := newTestHost(t, root, "http://127.0.0.1:1", nil)
	file := func(fn string) string { return filepath.Join(root, fn, metadata.FunctionFile) }
	st := h.Status()
	assert.Equal(t, 1, st.ToolsServed)
	assert.Contains(t, st.Errors, `function "huge", tool "huge_ttl" (`+file("huge")+`): task: ttlMs 9223372036854775807 is more than the maximum, 604800000 (7 days)`)
	assert.Contains(t, st.Errors, `function "poll", tool "huge_poll" (`+file("poll")+`): task: pollIntervalMs 86400001 is more than the maximum, 3600000 (1 hour)`)
	assert.Contains(t, logs.String(), "tool not served")
}

// TestTaskSettingsOutOfRangeAreRefused: FUNCMCP_TASK_TTL and
// FUNCMCP_TASK_HEARTBEAT past their bounds stop the host at start, naming
// the setting, where it came from and the bound.
func TestTaskSettingsOutOfRangeAreRefused(t *testing.T) {
	for _, tt := range []struct{ setting, value, want string }{
		{SettingTaskTTL, "200000h", `reading FUNCMCP_TASK_TTL from local.settings.json Values.FUNCMCP_TASK_TTL: "200000h" is more than the maximum, 168h0m0s`},
		{SettingTaskHeartbeat, "2h", `reading FUNCMCP_TASK_HEARTBEAT from local.settings.json Values.FUNCMCP_TASK_HEARTBEAT: "2h" is more than the maximum, 5m0s`},
		{SettingTaskHeartbeat, "1ms", `reading FUNCMCP_TASK_HEARTBEAT from local.settings.json Values.FUNCMCP_TASK_HEARTBEAT: "1ms" is less than the minimum, 10ms`},
		{SettingTaskTTL, "-1s", `reading FUNCMCP_TASK_TTL from local.settings.json Values.FUNCMCP_TASK_TTL: "-1s" is not a positive duration such as "5s"`},
	} {
		root := t.TempDir()
		writeFile(t, root, HostFile, `{"version":"2.0"}`)
		writeFile(t, root, "local.settings.json", `{"IsEncrypted":false,"Values":{"`+tt.setting+`":"`+tt.value+`"}}`)
		writeFile(t, root, "job/function.json", taskToolJSON("job", `"{\"support\":\"optional\"}"`))
		_, err := New(&Options{ScriptRoot: root, WorkerURL: "http://127.0.0.1:1", SystemKey: testKey})
		require.Error(t, err, "%s=%s", tt.setting, tt.value)
		assert.Contains(t, err.Error(), tt.want)
	}
}

// TestTaskStoreLimitsFromSettings: the memory store's limits come from the
// settings; a value that is not a positive whole number stops the host.
func TestTaskStoreLimitsFromSettings(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, HostFile, `{"version":"2.0"}`)
	writeFile(t, root, "local.settings.json", `{"IsEncrypted":false,"Values":{"`+SettingTaskMaxKeptPerClient+`":"many"}}`)
	writeFile(t, root, "job/function.json", taskToolJSON("job", `"{\"support\":\"optional\"}"`))
	_, err := New(&Options{ScriptRoot: root, WorkerURL: "http://127.0.0.1:1", SystemKey: testKey})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `reading FUNCMCP_TASK_MAX_KEPT_PER_CLIENT from local.settings.json Values.FUNCMCP_TASK_MAX_KEPT_PER_CLIENT: "many" is not a positive whole number`)
}
