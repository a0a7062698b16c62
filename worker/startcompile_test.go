package worker

import (
	"context"
	"testing"

	"github.com/funcmcp/funcmcp/binding"
)

// TestStartCompilesOnlySchemasTheQuickChecksCannotVouchFor: a worker's start
// (registering the tools, then the build that serving runs) compiles only
// the schemas whose validity the quick checks cannot vouch for, each once;
// the others are compiled when a validation first needs them, which a
// valid value never does. Compiling every schema at start took most of a
// worker's time from main to listening.
func TestStartCompilesOnlySchemasTheQuickChecksCannotVouchFor(t *testing.T) {
	type in struct {
		City string `json:"city"`
		Days int    `json:"days,omitempty"`
	}
	type out struct {
		Temp    float64 `json:"temp"`
		Summary string  `json:"summary"`
	}
	a := New(&Options{ScriptRoot: t.TempDir()})
	before := binding.CompileCount()
	AddTool(a, "typed", func(context.Context, *ToolContext, in) (*Result, out, error) { return nil, out{}, nil })
	AddTool(a, "listy", func(context.Context, *ToolContext, in) (*Result, []int, error) { return nil, nil, nil })
	// A pattern is outside the quick metaschema check: these two are
	// compiled at start, the output schema once for its two parses.
	a.ConfigureMcpTool("patterned").
		WithInputSchema(`{"type":"object","properties":{"code":{"type":"string","pattern":"^[A-Z]{2}$"}}}`).
		WithOutputSchema(`{"type":"object","properties":{"id":{"type":"string","pattern":"^x"}},"required":["id"]}`).
		Handle(func(context.Context, *ToolContext) (*Result, error) { return nil, nil })
	c, err := a.prepare()
	requireNoError(t, err, "prepare")
	if got := binding.CompileCount() - before; got != 2 {
		t.Errorf("the start compiled %d schemas, want 2 (the two with a pattern)", got)
	}

	// A value the check on JSON text vouches for needs no compiled
	// schema; one it does not compiles the schema once, with the verdict
	// and messages of a schema compiled at start.
	rules := c.byFunc["typed"].rules
	before = binding.CompileCount()
	requireNoError(t, rules.Output.ValidateText([]byte(`{"temp":1.5,"summary":"mild"}`)), "a valid value")
	if got := binding.CompileCount() - before; got != 0 {
		t.Errorf("a valid value compiled %d schemas", got)
	}
	eager, err := binding.ParseSchema(binding.OutputSchema, rules.Output.String())
	requireNoError(t, err, "ParseSchema")
	bad := []byte(`{"temp":"warm","summary":"mild"}`)
	want, got := eager.ValidateText(bad), rules.Output.ValidateText(bad)
	if want == nil || got == nil || want.Error() != got.Error() {
		t.Errorf("an invalid value: %v, want %v", got, want)
	}
	before = binding.CompileCount()
	_ = rules.Output.ValidateText(bad)
	if n := binding.CompileCount() - before; n != 0 {
		t.Errorf("a second invalid value compiled %d schemas", n)
	}
}
