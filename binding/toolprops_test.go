package binding

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/funcmcp/funcmcp/metadata"
)

// propsByReflection is how toolProperties text was read before
// scanToolProperties: encoding/json into a non-nil slice.
func propsByReflection(text []byte) ([]metadata.ToolProperty, error) {
	props := []metadata.ToolProperty{}
	err := json.Unmarshal(text, &props)
	return props, err
}

// TestScanToolPropertiesReadsWhatWorkersWrite: the form a worker writes is
// read by the scanner (not handed to encoding/json), into what
// encoding/json reads; every other form is declined.
func TestScanToolPropertiesReadsWhatWorkersWrite(t *testing.T) {
	odd := "<a & b>\u2028\"\\\x01\xff é"
	for _, props := range [][]metadata.ToolProperty{
		{},
		{{PropertyName: "city", PropertyType: metadata.PropertyTypeString, Description: "The city.", IsRequired: true}},
		{{PropertyName: odd, PropertyType: odd, Description: odd, IsArray: true, EnumValues: []string{odd, "", "b"}}, {}},
	} {
		text := metadata.AppendToolProperties(nil, props)
		got, ok := scanToolProperties(text)
		require.True(t, ok, "%s", text)
		want, err := propsByReflection(text)
		require.NoError(t, err)
		assert.Equal(t, want, got, "%s", text)
	}
	for _, text := range []string{
		` [ {"propertyName" : "a", "enumValues" : [ "x" , "y" ] } ] `,
		`[{},{"isRequired":false,"isArray":true}]`,
		`[{"enumValues":[]}]`,
	} {
		got, ok := scanToolProperties([]byte(text))
		require.True(t, ok, text)
		want, err := propsByReflection([]byte(text))
		require.NoError(t, err)
		assert.Equal(t, want, got, text)
	}
	for _, text := range []string{
		`[{"PropertyName":"a"}]`,                    // another case: encoding/json matches it
		`[{"propertyName":null}]`,                   // null leaves the field
		`[{"propertyName":"a","propertyName":"b"}]`, // the last wins there
		`[{"isRequired":"true"}]`,                   // a type error
		`[{"enumValues":null}]`,
		`[{"enumValues":["a",1]}]`,
		`[{"other":1}]`,
		`[{"propertyN\u0061me":"a"}]`,
		`[{}] x`,
		`[{}`,
		`{}`,
		`[1]`,
	} {
		_, ok := scanToolProperties([]byte(text))
		assert.False(t, ok, text)
	}
}

// FuzzScanToolProperties: whatever the scanner reads, encoding/json reads
// the same.
func FuzzScanToolProperties(f *testing.F) {
	f.Add([]byte(`[{"propertyName":"city","propertyType":"string","description":"d","isRequired":true,"isArray":false,"enumValues":["a"]}]`))
	f.Add([]byte(`[{},{"enumValues":[]}]`))
	f.Add([]byte(`[{"description":"\u00e9\ud800\\"}]`))
	f.Add([]byte("[{\"propertyName\":\"\xff\"}]"))
	f.Fuzz(func(t *testing.T, text []byte) {
		got, ok := scanToolProperties(text)
		if !ok {
			return
		}
		want, err := propsByReflection(text)
		if err != nil {
			t.Fatalf("the scanner read %q; encoding/json fails: %v", text, err)
		}
		if !assert.ObjectsAreEqual(want, got) {
			t.Fatalf("%q:\n scanner %#v\nencoding/json %#v", text, got, want)
		}
	})
}

// BenchmarkToolProperties: get_weather's four properties read by the
// scanner and, for comparison, by encoding/json (as before).
func BenchmarkToolProperties(b *testing.B) {
	text := metadata.AppendToolProperties(nil, []metadata.ToolProperty{
		{PropertyName: "city", PropertyType: "string", Description: "City name, e.g. Buenos Aires.", IsRequired: true},
		{PropertyName: "units", PropertyType: "string", Description: "metric or imperial.", EnumValues: []string{"metric", "imperial"}},
		{PropertyName: "days", PropertyType: "integer", Description: "Days of forecast, 1 to 7."},
		{PropertyName: "date", PropertyType: "string", Description: "First day, YYYY-MM-DD.", IsRequired: true},
	})
	b.Run("scanner", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, ok := scanToolProperties(text); !ok {
				b.Fatal("declined")
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := propsByReflection(text); err != nil {
				b.Fatal(err)
			}
		}
	})
}
