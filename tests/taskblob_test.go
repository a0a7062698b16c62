package tests

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/internal/testutil"
)

// resultBlobs lists the blobs of task id's result in the task store's
// container, with their sizes.
func resultBlobs(t *testing.T, az *testutil.Azurite, id string) map[string]int64 {
	t.Helper()
	blobs, err := azblob.NewClientFromConnectionString(az.ConnectionString(), nil)
	require.NoError(t, err)
	prefix := id + "/result-"
	got := map[string]int64{}
	pager := blobs.NewListBlobsFlatPager("funcmcp-tasks", &azblob.ListBlobsFlatOptions{Prefix: &prefix})
	for pager.More() {
		page, err := pager.NextPage(t.Context())
		require.NoError(t, err)
		for _, b := range page.Segment.BlobItems {
			got[*b.Name] = *b.Properties.ContentLength
		}
	}
	return got
}

// sizedText is what taskapp's sized tool returns for fill and n bytes.
func sizedText(fill string, n int) string {
	return strings.Repeat(fill, n/len(fill)+1)[:n]
}

// crossByBlob makes a task of size bytes on from and reads it on to: the
// result reaches to whole, byte for byte the one from reads, through a
// blob of the task container. It returns the task's id.
func crossByBlob(t *testing.T, az *testutil.Azurite, from, to taskClient, fill string, size int) string {
	t.Helper()
	id := from.create(t, "sized", map[string]any{"bytes": size, "fill": fill})
	there := to.await(t, id, "completed")
	var res struct {
		Content []struct{ Type, Text string }
	}
	require.NoError(t, json.Unmarshal(there.Result["result"], &res))
	require.Len(t, res.Content, 1)
	assert.Equal(t, "text", res.Content[0].Type)
	assert.True(t, res.Content[0].Text == sizedText(fill, size), "the whole text, byte for byte (%d bytes read, %d made)", len(res.Content[0].Text), size)
	here := from.get(t, id)
	assert.True(t, string(here.Result["result"]) == string(there.Result["result"]), "the instance that made it and the other read the same bytes")

	blobs := resultBlobs(t, az, id)
	require.Len(t, blobs, 1, "the result is in a blob, not in the table row")
	for _, n := range blobs {
		assert.Greater(t, n, int64(size), "the blob holds the whole result")
	}
	return id
}

// TestTaskBlobResultAcrossInstances: with FUNCMCP_TASK_STORE=azure, a task
// result over 15 KiB is stored as a blob by the instance that made it and
// read whole on another; after the storage restarts empty, such a task is
// gone on every instance ("no task", -32602, as docs/tasks.md says), and a
// new one crosses by blob again without a restart.
func TestTaskBlobResultAcrossInstances(t *testing.T) {
	az := testutil.StartAzurite(t, repoRoot(t))
	env := []string{"AzureWebJobsStorage=" + az.ConnectionString(), "FUNCMCP_TASK_STORE=azure", "FUNCMCP_TASK_HEARTBEAT=300ms"}
	a, b := startHostEnv(t, taskAppDir(t), env), startHostEnv(t, taskAppDir(t), env)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("A:\n%s\nB:\n%s", a.console.String(), b.console.String())
		}
	})
	onA, onB := taskClient{endpoint: a.endpoint, auth: "Bearer alice"}, taskClient{endpoint: b.endpoint, auth: "Bearer alice"}

	just := crossByBlob(t, az, onA, onB, "just over the inline bound;", 15<<10+1)
	large := crossByBlob(t, az, onB, onA, "a result of a mebibyte, made on B|", 1<<20)

	az.Stop()
	az.Start() // empty: the table, the container and their contents are gone
	for _, id := range []string{just, large} {
		for name, c := range map[string]taskClient{"A": onA, "B": onB} {
			r := c.get(t, id)
			if assert.NotNil(t, r.Error, "task %s on %s after the storage restarted empty: %v", id, name, r.Result["status"]) {
				assert.Equal(t, -32602, r.Error.Code, "%s: %s", name, r.Error.Message)
			}
		}
	}
	crossByBlob(t, az, onA, onB, "made again after the restart;", 100<<10)
}
