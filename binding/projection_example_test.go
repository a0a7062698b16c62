package binding_test

import (
	"encoding/json"
	"fmt"

	"github.com/funcmcp/funcmcp/binding"
)

// A natural array schema and the object projection that clients before MCP
// 2026-07-28 are shown, with its $ref rewritten; then a value both ways.
func ExampleProjectSchema() {
	natural := json.RawMessage(`{"type":"array","items":{"$ref":"#/$defs/prime"},"$defs":{"prime":{"type":"integer","minimum":2}}}`)
	projected, wrapped, err := binding.ProjectSchema(natural, "primes")
	if err != nil {
		panic(err)
	}
	fmt.Println(string(projected), wrapped)

	value, _ := binding.ProjectValue(json.RawMessage(`[2,3,5]`), "primes")
	back, _ := binding.UnprojectValue(value, "primes")
	fmt.Println(string(value), string(back))
	// Output:
	// {"type":"object","properties":{"primes":{"type":"array","items":{"$ref":"#/properties/primes/$defs/prime"},"$defs":{"prime":{"type":"integer","minimum":2}}}},"required":["primes"]} true
	// {"primes":[2,3,5]} [2,3,5]
}
