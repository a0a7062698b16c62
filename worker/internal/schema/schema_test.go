package schema

import (
	"encoding/json"
	"errors"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/funcmcp/funcmcp/binding"
)

type Inner struct {
	X int `json:"x"`
}

type Embedded struct {
	E      string `json:"e"`
	Shadow string `json:"shadow"`
}

type PtrEmbedded struct {
	P string `json:"p"`
}

type withEmbedded struct {
	Embedded
	*PtrEmbedded
	Shadow string `json:"shadow,omitempty"`
	Named  Inner  `json:"named"`
}

type tagged struct {
	Renamed   string          `json:"renamed"`
	Skipped   string          `json:"-"`
	Dash      string          `json:"-,"`
	Optional  string          `json:"optional,omitempty"`
	Zero      int             `json:"zero,omitzero"`
	AsString  int64           `json:"as_string,string"`
	Untagged  bool            //
	unexport  string          //nolint:unused
	Described float32         `json:"described" description:"A <float> & more"`
	Choice    string          `json:"choice" enum:"a, b ,c"`
	Choices   []string        `json:"choices" enum:"x,y"`
	Ptr       *int            `json:"ptr"`
	When      time.Time       `json:"when"`
	Dur       time.Duration   `json:"dur"`
	Raw       json.RawMessage `json:"raw"`
	Any       any             `json:"any"`
	Bytes     []byte          `json:"bytes"`
	Fixed     [2]uint16       `json:"fixed"`
	IntMap    map[int]bool    `json:"int_map"`
	IP        net.IP          `json:"ip"`
	Num       json.Number     `json:"num"`
}

type Node struct {
	Value    int     `json:"value"`
	Children []*Node `json:"children,omitempty"`
	Peer     *Other  `json:"peer,omitempty"`
}

type Other struct {
	Back *Node  `json:"back" description:"back link"`
	Self *Other `json:"self,omitempty"`
}

type holder struct {
	A Other `json:"a"`
	B Other `json:"b"`
}

func TestFor(t *testing.T) {
	tests := []struct {
		name string
		typ  reflect.Type
		want string
	}{
		{"string", reflect.TypeFor[string](), `{"type":"string"}`},
		{"int", reflect.TypeFor[int64](), `{"type":"integer"}`},
		{"uint", reflect.TypeFor[uint](), `{"type":"integer","minimum":0}`},
		{"float", reflect.TypeFor[float32](), `{"type":"number"}`},
		{"bool", reflect.TypeFor[bool](), `{"type":"boolean"}`},
		{"pointer root is its element", reflect.TypeFor[**Inner](), `{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}`},
		{"slice", reflect.TypeFor[[]int](), `{"type":["array","null"],"items":{"type":"integer"}}`},
		{"slice of pointers", reflect.TypeFor[[]*string](), `{"type":["array","null"],"items":{"type":["string","null"]}}`},
		{"map root is an object", reflect.TypeFor[map[string]Inner](), `{"type":"object","additionalProperties":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}}`},
		{"any", reflect.TypeFor[any](), `{}`},
		{"empty struct", reflect.TypeFor[struct{}](), `{"type":"object","properties":{}}`},
		{"tags", reflect.TypeFor[tagged](), `{"type":"object","properties":{
			"renamed":{"type":"string"},
			"-":{"type":"string"},
			"optional":{"type":"string"},
			"zero":{"type":"integer"},
			"as_string":{"type":"string"},
			"Untagged":{"type":"boolean"},
			"described":{"type":"number","description":"A <float> & more"},
			"choice":{"type":"string","enum":["a","b","c"]},
			"choices":{"type":["array","null"],"items":{"type":"string","enum":["x","y"]}},
			"ptr":{"type":["integer","null"]},
			"when":{"type":"string","format":"date-time"},
			"dur":{"type":"integer"},
			"raw":{},
			"any":{},
			"bytes":{"type":["string","null"],"contentEncoding":"base64"},
			"fixed":{"type":"array","items":{"type":"integer","minimum":0},"minItems":2,"maxItems":2},
			"int_map":{"type":["object","null"],"additionalProperties":{"type":"boolean"}},
			"ip":{"type":"string"},
			"num":{"type":"number"}},
			"required":["renamed","-","as_string","Untagged","described","choice","choices","when","dur","raw","any","bytes","fixed","int_map","ip","num"]}`},
		{"embedded", reflect.TypeFor[withEmbedded](), `{"type":"object","properties":{
			"e":{"type":"string"},
			"p":{"type":"string"},
			"shadow":{"type":"string"},
			"named":{"type":"object","properties":{"x":{"type":"integer"}},"required":["x"]}},
			"required":["e","named"]}`},
		{"recursive root", reflect.TypeFor[Node](), `{"type":"object","properties":{
			"value":{"type":"integer"},
			"children":{"type":["array","null"],"items":{"anyOf":[{"$ref":"#"},{"type":"null"}]}},
			"peer":{"anyOf":[{"$ref":"#/$defs/Other"},{"type":"null"}]}},
			"required":["value"],
			"$defs":{"Other":{"type":"object","properties":{
				"back":{"anyOf":[{"$ref":"#"},{"type":"null"}],"description":"back link"},
				"self":{"anyOf":[{"$ref":"#/$defs/Other"},{"type":"null"}]}}}}}`},
		{"recursive type used twice", reflect.TypeFor[holder](), `{"type":"object","properties":{
			"a":{"$ref":"#/$defs/Other"},"b":{"$ref":"#/$defs/Other"}},"required":["a","b"],
			"$defs":{"Other":{"type":"object","properties":{
				"back":{"anyOf":[{"$ref":"#/$defs/Node"},{"type":"null"}],"description":"back link"},
				"self":{"anyOf":[{"$ref":"#/$defs/Other"},{"type":"null"}]}}},
			"Node":{"type":"object","properties":{"value":{"type":"integer"},"children":{"type":["array","null"],"items":{"anyOf":[{"$ref":"#/$defs/Node"},{"type":"null"}]}},"peer":{"anyOf":[{"$ref":"#/$defs/Other"},{"type":"null"}]}},"required":["value"]}}}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := For(tc.typ)
			if err != nil {
				t.Fatalf("For: %v", err)
			}
			data, err := s.JSON()
			if err != nil {
				t.Fatalf("JSON: %v", err)
			}
			if w, g := norm(t, tc.want), norm(t, string(data)); w != g {
				t.Errorf("schema differs\nwant: %s\ngot:  %s", w, g)
			}
			// Every generated object schema is one the host accepts.
			if s.IsObject() {
				if _, err := binding.ParseSchema(binding.OutputSchema, string(data)); err != nil {
					t.Errorf("ParseSchema: %v", err)
				}
			}
		})
	}
}

// TestSchemaMatchesEncoding checks that a value validates against its type's schema.
func TestSchemaMatchesEncoding(t *testing.T) {
	n := 3
	values := []any{
		tagged{Choice: "a", Choices: []string{"x"}, Ptr: &n, Raw: json.RawMessage(`[1]`), IP: net.IPv4(1, 2, 3, 4), Num: "1.5"},
		tagged{Choice: "b", Raw: json.RawMessage(`null`)},
		withEmbedded{PtrEmbedded: &PtrEmbedded{P: "p"}},
		Node{Value: 1, Children: []*Node{{Value: 2}, nil}, Peer: &Other{Back: &Node{}}},
		holder{},
	}
	for _, v := range values {
		s, err := For(reflect.TypeOf(v))
		if err != nil {
			t.Fatalf("For(%T): %v", v, err)
		}
		text, _ := s.JSON()
		ps, err := binding.ParseSchema(binding.OutputSchema, string(text))
		if err != nil {
			t.Fatalf("ParseSchema(%T): %v", v, err)
		}
		data, _ := json.Marshal(v)
		if _, err := ps.ValidateJSON(data); err != nil {
			t.Errorf("%T value %s does not match its schema: %v", v, data, err)
		}
	}
}

func TestForErrors(t *testing.T) {
	var ute *UnsupportedTypeError
	var te *TagError
	tests := []struct {
		name   string
		typ    reflect.Type
		target any
		msg    string
	}{
		{"chan", reflect.TypeFor[chan int](), &ute, "type chan int cannot be encoded as JSON"},
		{"func field", reflect.TypeFor[struct {
			F func() `json:"f"`
		}](), &ute, "type func() of f cannot be encoded as JSON"},
		{"complex in slice", reflect.TypeFor[struct{ C []complex64 }](), &ute, "of C[]"},
		{"struct map key", reflect.TypeFor[map[Inner]int](), &ute, "map[schema.Inner]int"},
		{"enum on bool", reflect.TypeFor[struct {
			B bool `json:"b" enum:"true"`
		}](), &te, "field b: an enum tag applies only to string fields"},
		{"empty enum", reflect.TypeFor[struct {
			S string `enum:" , "`
		}](), &te, "field S: the enum tag is empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := For(tc.typ)
			if err == nil {
				t.Fatal("For succeeded")
			}
			if !errors.As(err, tc.target) {
				t.Errorf("error %T %v is not %T", err, err, tc.target)
			}
			if !contains(err.Error(), tc.msg) {
				t.Errorf("message %q lacks %q", err, tc.msg)
			}
		})
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func norm(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, s)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
