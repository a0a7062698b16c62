package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
	"github.com/funcmcp/funcmcp/metadata"
)

// announcedNote is the line funchost logs when the change of note://pinned
// reaches it, just before it hands the change to its listeners.
const announcedNote = `msg="Change announced by the app" kind=resourceUpdated uri=note://pinned`

// TestSampleAnnouncesTheNoteToFunchost: funchost starts the sample's worker
// with the change channel in its environment; a client calls pin_note, and
// the change reaches funchost (its log, at the seam where the listeners'
// hub takes it) by the time the call returns; the note reads the new text.
func TestSampleAnnouncesTheNoteToFunchost(t *testing.T) {
	t.Parallel()
	h := startHost(t, sample(t))
	cs := connectGoSDK(t, h.endpoint, "2025-11-25")
	ctx, cancel := context.WithTimeout(t.Context(), clientTimeout)
	defer cancel()

	assert.NotContains(t, h.console.String(), announcedNote)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "pin_note", Arguments: map[string]any{"text": "Buy milk"}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res.Content)
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	var note struct {
		URI       string `json:"uri"`
		Text      string `json:"text"`
		Revision  int    `json:"revision"`
		Announced bool   `json:"announced"`
		Delivery  string `json:"delivery"`
	}
	require.NoError(t, json.Unmarshal(data, &note))
	assert.True(t, note.Announced, "funchost took the change: %s", data)
	assert.Equal(t, "sent", note.Delivery, "one funchost: nothing to wait for")
	assert.Equal(t, 1, note.Revision)

	// The log line is written before the worker hears 204; it reaches the
	// console through funchost's stderr pipe.
	require.Eventually(t, func() bool { return strings.Contains(h.console.String(), announcedNote) },
		clientTimeout, 10*time.Millisecond, "%s", h.console.String())
	assert.Equal(t, 1, strings.Count(h.console.String(), announcedNote), "one change, announced once")

	read, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "note://pinned"})
	require.NoError(t, err)
	require.Len(t, read.Contents, 1)
	assert.JSONEq(t, `{"text":"Buy milk","revision":1}`, read.Contents[0].Text)
}

// TestSampleAnnouncesNothingUnderTheFunctionsHost: the Azure Functions host
// offers the worker no change channel; pin_note pins the note all the same
// and says that nobody was told.
func TestSampleAnnouncesNothingUnderTheFunctionsHost(t *testing.T) {
	t.Parallel()
	base := startHandler(t, sample(t))
	res, _ := invokeAsFunctionsHost(t, base, "pin_note", `{"text":"Call home"}`)
	require.False(t, res.IsError, "%s", resultText(res))
	var note struct {
		Text      string `json:"text"`
		Announced bool   `json:"announced"`
	}
	require.NoError(t, json.Unmarshal(res.StructuredContent, &note))
	assert.Equal(t, "Call home", note.Text)
	assert.False(t, note.Announced)
}

var changeApp once

// changeAppDir returns the folder of the built tests/changeapp.
func changeAppDir(t *testing.T) string {
	t.Helper()
	return changeApp.get(t, func() (string, error) {
		return buildApp("changeapp", modulePath+"/tests/changeapp", []byte(hardHostJSON))
	})
}

// lastAnnouncement is the line changeapp prints once it announced all.
const lastAnnouncement = "announced test://{template}: "

// TestAppAnnouncesOutsideInvocations: code of the worker process that runs
// in no invocation (changeapp announces as it starts) reaches funchost
// with every kind of change an app may announce; a template is refused
// before anything is sent.
func TestAppAnnouncesOutsideInvocations(t *testing.T) {
	t.Parallel()
	h := startHost(t, changeAppDir(t))
	require.Eventually(t, func() bool { return strings.Contains(h.console.String(), lastAnnouncement) },
		clientTimeout, 10*time.Millisecond, "%s", h.console.String())
	console := h.console.String()
	for _, what := range []string{"tools", "prompts", "resources", "test://timer/1"} {
		assert.Contains(t, console, "[handler] announced "+what+": ok\n")
	}
	// funchost's own lines reach the console on a path of their own: wait
	// for them rather than read them once.
	taken := []string{
		`msg="Change announced by the app" kind=toolsListChanged` + "\n",
		`msg="Change announced by the app" kind=promptsListChanged` + "\n",
		`msg="Change announced by the app" kind=resourcesListChanged` + "\n",
		`msg="Change announced by the app" kind=resourceUpdated uri=test://timer/1` + "\n",
	}
	require.Eventually(t, func() bool {
		console = h.console.String()
		for _, line := range taken {
			if !strings.Contains(console, line) {
				return false
			}
		}
		return true
	}, clientTimeout, 10*time.Millisecond, "funchost logs every change it took; console:\n%s", h.console.String())
	assert.Contains(t, console, lastAnnouncement+`announcing that "test://{template}" changed: not a change a function may announce`)
	assert.NotContains(t, console, "uri=test://{template}", "nothing bad reaches funchost")
}

// TestAppAnnouncesNothingOutsideInvocationsUnderTheFunctionsHost: the same
// process started as the Azure Functions host starts it has no channel;
// each announcement says so at once.
func TestAppAnnouncesNothingOutsideInvocationsUnderTheFunctionsHost(t *testing.T) {
	t.Parallel()
	app := changeAppDir(t)
	cmd := exec.Command(filepath.Join(app, "handler"))
	cmd.Dir = app
	cmd.Env = append(os.Environ(), metadata.EnvCustomHandlerPort+"="+strconv.Itoa(testutil.FreePort(t)), metadata.EnvAppRootPath+"="+app,
		metadata.EnvChangesURL+"=", metadata.EnvChangesKey+"=") // as if funchost had never been near
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill() // the process this test started, by its pid
		_ = cmd.Wait()
	})
	require.Eventually(t, func() bool { return strings.Contains(out.String(), lastAnnouncement) },
		clientTimeout, 10*time.Millisecond, "%s", out.String())
	for _, what := range []string{"tools", "prompts", "resources", "test://timer/1"} {
		assert.Contains(t, out.String(), "announced "+what+": not supported\n")
	}
}

// TestPinNoteFloodLosesNoAnnouncement: a thousand pin_note calls as fast as
// eight callers make them, far past funchost's rate of announced changes:
// every call's announcement is taken (none refused), and a client that
// listens to note://pinned hears of it.
func TestPinNoteFloodLosesNoAnnouncement(t *testing.T) {
	t.Parallel()
	h := startHost(t, sample(t))
	updated := subscribeGoSDK(t, h.endpoint, "", noteURI)
	caller := connectGoSDK(t, h.endpoint, "2025-11-25")
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()

	const callers, calls = 8, 125
	var unannounced, failed atomic.Int64
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			for i := range calls {
				res, err := caller.CallTool(ctx, &mcp.CallToolParams{Name: "pin_note", Arguments: map[string]any{"text": fmt.Sprintf("note %d/%d", c, i)}})
				if err != nil || res.IsError {
					failed.Add(1)
					continue
				}
				var note struct {
					Announced bool `json:"announced"`
				}
				data, _ := json.Marshal(res.StructuredContent)
				if json.Unmarshal(data, &note) != nil || !note.Announced {
					unannounced.Add(1)
				}
			}
		})
	}
	wg.Wait()
	require.Zero(t, failed.Load(), "every call succeeds")
	assert.Zero(t, unannounced.Load(), "every call's change is taken, past the rate too")
	awaitUpdate(t, updated, noteURI, h)
}

// TestPinNoteSaysPendingWhileStorageIsHeld: two funchost processes on
// Azurite; the storage of the one that serves pin_note is held by a proxy
// (paused). pin_note still pins and funchost takes the change, but the
// result says the delivery to the other instance is pending, not that it
// was announced everywhere; once storage answers again it says sent.
func TestPinNoteSaysPendingWhileStorageIsHeld(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	qp := testutil.StartHoldProxy(t, "127.0.0.1:"+strconv.Itoa(az.Port))
	bp := testutil.StartHoldProxy(t, "127.0.0.1:"+strconv.Itoa(az.BlobPort))
	env := []string{
		"FUNCMCP_BACKPLANE=azurequeues",
		"WEBSITE_AUTH_ENCRYPTION_KEY=" + sharedSessionKey,
		"FUNCMCP_BACKPLANE_HEARTBEAT=" + testHeartbeat.String(),
	}
	viaProxy := fmt.Sprintf("AzureWebJobsStorage=DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=%s;QueueEndpoint=http://%s/devstoreaccount1;BlobEndpoint=http://%s/devstoreaccount1",
		testutil.AzuriteAccountKey, qp.Addr(), bp.Addr())
	app := sample(t)
	a := startHostEnv(t, app, append(env, "AzureWebJobsStorage="+az.ConnectionString()))
	b := startHostEnv(t, app, append(env, viaProxy))
	listen := subscribeGoSDK(t, a.endpoint, "", noteURI)
	cs := connectGoSDK(t, b.endpoint, "2025-11-25")

	assert.Equal(t, "sent", pinNote(t, cs, "Before"))
	awaitUpdate(t, listen, noteURI, a, b)

	qp.Hold()
	bp.Hold()
	held := true
	defer func() {
		if held {
			qp.Release()
			bp.Release()
		}
	}()
	assert.Equal(t, "pending", pinNote(t, cs, "While held"), "taken, not confirmed for the other instance")

	qp.Release()
	bp.Release()
	held = false
	require.EventuallyWithT(t, func(ct *assert.CollectT) {
		assert.Equal(ct, "sent", pinNote(t, cs, "After"))
	}, time.Minute, 200*time.Millisecond, "storage answers again")
}
