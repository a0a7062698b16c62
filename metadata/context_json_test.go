package metadata

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestToolInvocationContextAppendJSONEncodesAsMarshal(t *testing.T) {
	// AppendJSON writes every field by hand: a new field must be added there.
	for typ, fields := range map[reflect.Type]int{
		reflect.TypeFor[ToolInvocationContext](): 6, reflect.TypeFor[ClientInfo](): 3,
		reflect.TypeFor[Transport](): 3, reflect.TypeFor[TransportProperties](): 1,
	} {
		require.Equal(t, fields, typ.NumField(), "%v changed: update AppendJSON and this test", typ)
	}
	for name, c := range map[string]*ToolInvocationContext{
		"empty": {},
		"full": {
			Name: "get_weather <&>",
			Arguments: map[string]json.RawMessage{
				"city": json.RawMessage(`"Oslo \u00e9"`), "days": json.RawMessage(` 7 `),
				"nested": json.RawMessage("{ \"a\" : [1, 2,\n3] }"), "none": nil, "z\u2028": json.RawMessage(`null`),
			},
			SessionID:  "s\"1",
			ClientInfo: &ClientInfo{Name: "client", Title: "Client", Version: "1.0"},
			Transport: &Transport{Name: TransportStreamableHTTP, SessionID: "s1", Properties: &TransportProperties{
				Headers: MakeHeaders(map[string]string{"Accept": "application/json, text/event-stream", "X-B": "b", "A-\xff": "bad \xff"}),
			}},
		},
		"no title, empty properties": {
			Name: "t", ClientInfo: &ClientInfo{Name: "c", Version: "2"},
			Transport: &Transport{Name: "http", Properties: &TransportProperties{}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			want, err := Marshal(c)
			require.NoError(t, err)
			got, err := c.AppendJSON(nil)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got))
		})
	}
	_, err := (&ToolInvocationContext{Name: "x", Arguments: map[string]json.RawMessage{"a": json.RawMessage(`{bad`)}}).AppendJSON(nil)
	assert.ErrorContains(t, err, `argument "a"`)
}
