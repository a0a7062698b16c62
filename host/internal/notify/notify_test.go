package notify

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWireRoundTrip(t *testing.T) {
	for _, c := range []Change{
		{Kind: ResourceUpdated, URI: "note://today"},
		{Kind: ToolsListChanged},
		{Kind: TaskStatus, TaskID: "t1", Owner: "o1", Task: []byte(`{"taskId":"t1","status":"working"}`)},
	} {
		b, err := Encode(c)
		require.NoError(t, err)
		got, err := Decode(b)
		require.NoError(t, err)
		assert.Equal(t, c, got)
	}
}

func TestBadChangesRefused(t *testing.T) {
	for name, c := range map[string]Change{
		"no kind":          {},
		"unknown kind":     {Kind: "other"},
		"resource, no uri": {Kind: ResourceUpdated},
		"long uri":         {Kind: ResourceUpdated, URI: strings.Repeat("a", MaxURI+1)},
		"task, no owner":   {Kind: TaskStatus, TaskID: "t", Task: []byte(`{}`)},
	} {
		_, err := Encode(c)
		assert.ErrorIs(t, err, ErrBadChange, name)
	}
	_, err := Decode([]byte(`{"kind":"taskStatus","taskId":"t"}`))
	assert.ErrorIs(t, err, ErrBadChange)
	_, err = Decode([]byte(`not json`))
	assert.ErrorIs(t, err, ErrBadChange)
}
