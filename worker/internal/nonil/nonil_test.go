package nonil

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type inner struct {
	Tags []string       `json:"tags"`
	Attr map[string]int `json:"attr"`
}

type outer struct {
	Name    string           `json:"name"`
	Inner   inner            `json:"inner"`
	Ptr     *inner           `json:"ptr"`
	List    []inner          `json:"list"`
	ByKey   map[string]inner `json:"byKey"`
	Blob    []byte           `json:"blob"`
	Raw     json.RawMessage  `json:"raw"`
	At      time.Time        `json:"at"`
	Any     any              `json:"any"`
	private []string
}

func TestValue(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	in := outer{
		Name:  "x",
		Ptr:   &inner{Tags: []string{"a"}},
		List:  []inner{{}, {Tags: []string{"b"}, Attr: map[string]int{"n": 1}}},
		ByKey: map[string]inner{"k": {}},
		At:    at,
		Any:   inner{},
	}
	data, err := json.Marshal(Value(in))
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":"x","inner":{"tags":[],"attr":{}},"ptr":{"tags":["a"],"attr":{}},
		"list":[{"tags":[],"attr":{}},{"tags":["b"],"attr":{"n":1}}],"byKey":{"k":{"tags":[],"attr":{}}},
		"blob":null,"raw":null,"at":"2026-01-02T03:04:05Z","any":{"tags":[],"attr":{}}}`, string(data))

	// The handler's value is never modified.
	assert.Nil(t, in.Inner.Tags)
	assert.Nil(t, in.Ptr.Attr)
	assert.Nil(t, in.List[0].Tags)
	assert.Nil(t, in.ByKey["k"].Attr)

	for _, v := range []any{nil, 5, "s", []int(nil), map[string]int(nil), (*inner)(nil), struct{ N int }{1}} {
		data, err := json.Marshal(Value(v))
		require.NoError(t, err)
		switch v.(type) {
		case []int:
			assert.Equal(t, `[]`, string(data))
		case map[string]int:
			assert.Equal(t, `{}`, string(data))
		default:
			want, _ := json.Marshal(v)
			assert.Equal(t, string(want), string(data))
		}
	}
}

type node struct {
	Name     string  `json:"name"`
	Children []*node `json:"children"`
}

func TestValueRecursive(t *testing.T) {
	tree := &node{Name: "root", Children: []*node{{Name: "leaf"}}}
	data, err := json.Marshal(Value(tree))
	require.NoError(t, err)
	assert.JSONEq(t, `{"name":"root","children":[{"name":"leaf","children":[]}]}`, string(data))
	assert.Nil(t, tree.Children[0].Children)
}

func BenchmarkValue(b *testing.B) {
	flat := struct {
		A, B string
		C    float64
	}{"a", "b", 1}
	full := outer{Name: "x", List: make([]inner, 8)}
	b.Run("no slices or maps", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Value(flat)
		}
	})
	b.Run("eight nested nil pairs", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = Value(full)
		}
	})
}
