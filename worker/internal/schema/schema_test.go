package schema

import (
	"encoding/json"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type tagged struct {
	Query   string  `json:"query" jsonschema:"What to search for"`
	Limit   int     `json:"limit,omitempty" jsonschema:"At most this many"`
	Score   float64 `json:"score,omitzero"`
	Skipped string  `json:"-"`
	Dash    string  `json:"-,"`
	NoTag   bool
	hidden  int
}

type base struct {
	ID      string `json:"id"`
	Created int64  `json:"created"`
}

type embedding struct {
	base
	Name string `json:"name"`
}

type nested struct {
	Where struct {
		Lat float64 `json:"lat"`
		Lon float64 `json:"lon"`
	} `json:"where"`
	Tagged tagged `json:"tagged"`
}

type pointers struct {
	Count *int     `json:"count"`
	Inner *tagged  `json:"inner,omitempty"`
	Ptrs  *[]int   `json:"ptrs"`
	Any   any      `json:"any"`
	Small int8     `json:"small"`
	Big   uint64   `json:"big"`
	Ratio float32  `json:"ratio"`
	Hosts []net.IP `json:"-"`
}

type withMap struct {
	Attr  map[string]int     `json:"attr"`
	Inner map[string]tagged  `json:"inner"`
	Free  map[string]any     `json:"free"`
	Ptrs  map[string]*tagged `json:"ptrs"`
}

type withSlices struct {
	Names  []string   `json:"names"`
	Grid   [][]int    `json:"grid"`
	Fixed  [2]int     `json:"fixed"`
	Items  []tagged   `json:"items"`
	Maybe  *[]string  `json:"maybe"`
	ByName []withMap2 `json:"byName,omitempty"`
}

type withMap2 struct {
	M map[string]string `json:"m"`
}

type withTime struct {
	At    time.Time  `json:"at"`
	Maybe *time.Time `json:"maybe,omitempty"`
}

type withEnum struct {
	Unit  string   `json:"unit" enum:"celsius,fahrenheit"`
	Kinds []string `json:"kinds" enum:"doc, code"`
}

type withDescription struct {
	City string `json:"city" description:"The city"`
	Both string `json:"both" description:"ignored" jsonschema:"wins"`
}

type treeNode struct {
	Name     string      `json:"name"`
	Children []*treeNode `json:"children"`
}

type holder struct {
	Root  treeNode  `json:"root"`
	Other *treeNode `json:"other,omitempty"`
}

type withBytes struct {
	Blob []byte          `json:"blob"`
	Raw  json.RawMessage `json:"raw"`
	IP   net.IP          `json:"ip"`
}

// forTypeJSON is what the official Go SDK advertises for t.
func forTypeJSON(t *testing.T, typ reflect.Type) (string, error) {
	t.Helper()
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	s, err := jsonschema.ForType(typ, nil)
	if err != nil {
		return "", err
	}
	data, err := json.Marshal(s)
	require.NoError(t, err)
	return string(data), nil
}

func ourJSON(t *testing.T, typ reflect.Type) string {
	t.Helper()
	s, err := For(typ)
	require.NoError(t, err)
	data, err := json.Marshal(s)
	require.NoError(t, err)
	return string(data)
}

// TestSameAsForType: for these types the schema is exactly
// jsonschema.ForType's, the one the official Go SDK advertises.
func TestSameAsForType(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[tagged](),
		reflect.TypeFor[embedding](),
		reflect.TypeFor[nested](),
		reflect.TypeFor[*nested](), // a pointer root is its element
		reflect.TypeFor[pointers](),
		reflect.TypeFor[withMap](),
		reflect.TypeFor[map[string]float64](),
		reflect.TypeFor[struct{}](),
		reflect.TypeFor[string](),
		reflect.TypeFor[uint16](),
	} {
		t.Run(typ.String(), func(t *testing.T) {
			want, err := forTypeJSON(t, typ)
			require.NoError(t, err)
			assert.JSONEq(t, want, ourJSON(t, typ))
		})
	}
}

// TestDepartsFromForType lists every difference from jsonschema.ForType,
// with the reason; each departure is checked to be real.
func TestDepartsFromForType(t *testing.T) {
	for _, tc := range []struct {
		name   string
		typ    reflect.Type
		reason string
		want   string
	}{
		{"slices", reflect.TypeFor[withSlices](),
			`a slice is "array", not ["null","array"]: funcmcp sends nil as [] (a pointer to a slice still allows null)`,
			`{"type":"object","properties":{
				"names":{"type":"array","items":{"type":"string"}},
				"grid":{"type":"array","items":{"type":"array","items":{"type":"integer"}}},
				"fixed":{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":2},
				"items":{"type":"array","items":{"type":"object","properties":{"query":{"type":"string","description":"What to search for"},"limit":{"type":"integer","description":"At most this many"},"score":{"type":"number"},"-":{"type":"string"},"NoTag":{"type":"boolean"}},"required":["query","-","NoTag"],"additionalProperties":false}},
				"maybe":{"type":["null","array"],"items":{"type":"string"}},
				"byName":{"type":"array","items":{"type":"object","properties":{"m":{"type":"object","additionalProperties":{"type":"string"}}},"required":["m"],"additionalProperties":false}}},
			"required":["names","grid","fixed","items","maybe"],"additionalProperties":false}`},
		{"time.Time", reflect.TypeFor[withTime](),
			`time.Time says its format, date-time`,
			`{"type":"object","properties":{"at":{"type":"string","format":"date-time"},"maybe":{"type":["null","string"],"format":"date-time"}},"required":["at"],"additionalProperties":false}`},
		{"enums", reflect.TypeFor[withEnum](),
			`the enum tag funcmcp users rely on is kept`,
			`{"type":"object","properties":{"unit":{"type":"string","enum":["celsius","fahrenheit"]},"kinds":{"type":"array","items":{"type":"string","enum":["doc","code"]}}},"required":["unit","kinds"],"additionalProperties":false}`},
		{"description alias", reflect.TypeFor[withDescription](),
			`a description tag is an alias of the jsonschema tag, which wins`,
			`{"type":"object","properties":{"city":{"type":"string","description":"The city"},"both":{"type":"string","description":"wins"}},"required":["city","both"],"additionalProperties":false}`},
		{"recursive root", reflect.TypeFor[treeNode](),
			`ForType rejects cycles; the root type is referenced as "#" (a pointer to it may be null, as ForType says of pointers)`,
			`{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"anyOf":[{"$ref":"#"},{"type":"null"}]}}},"required":["name","children"],"additionalProperties":false}`},
		{"recursive field", reflect.TypeFor[holder](),
			`ForType rejects cycles; a recursive type is defined once under $defs`,
			`{"type":"object","properties":{"root":{"$ref":"#/$defs/treeNode"},"other":{"anyOf":[{"$ref":"#/$defs/treeNode"},{"type":"null"}]}},"required":["root"],"additionalProperties":false,
			"$defs":{"treeNode":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"anyOf":[{"$ref":"#/$defs/treeNode"},{"type":"null"}]}}},"required":["name","children"],"additionalProperties":false}}}`},
		{"own encodings", reflect.TypeFor[withBytes](),
			`[]byte is base64 text, MarshalJSON types any value and MarshalText types strings, as encoding/json writes them`,
			`{"type":"object","properties":{"blob":{"type":"string","contentEncoding":"base64"},"raw":true,"ip":{"type":"string"}},"required":["blob","raw","ip"],"additionalProperties":false}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ourJSON(t, tc.typ)
			assert.JSONEq(t, tc.want, got, tc.reason)
			theirs, err := forTypeJSON(t, tc.typ)
			if err == nil {
				assert.NotEqual(t, normalize(t, theirs), normalize(t, got), "not a departure: %s", tc.reason)
			}
		})
	}
}

func normalize(t *testing.T, s string) string {
	var v any
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	data, _ := json.Marshal(v)
	return string(data)
}

func TestForErrors(t *testing.T) {
	type badEnum struct {
		N int `json:"n" enum:"1,2"`
	}
	type selfMap map[string]selfMap
	for _, tc := range []struct {
		typ  reflect.Type
		want string
	}{
		{reflect.TypeFor[struct{ C chan int }](), "chan int"},
		{reflect.TypeFor[func()](), "func()"},
		{reflect.TypeFor[badEnum](), "enum tag needs a string field"},
		{reflect.TypeFor[selfMap](), "refers to itself and is not a struct"},
		{reflect.TypeFor[map[int]string](), "map key"},
	} {
		t.Run(tc.typ.String(), func(t *testing.T) {
			_, err := For(tc.typ)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.False(t, strings.HasPrefix(err.Error(), "ForType("), err.Error())
		})
	}
}
