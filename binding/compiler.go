package binding

import (
	"sync"
	"sync/atomic"
)

// Compiler compiles schemas with [ParseSchema], each distinct schema text
// once: apps made by code generators repeat the same schemas across many
// tools, and a compile costs far more than a validation. A *Compiler is safe
// for concurrent use; the zero value is ready. A nil *Compiler compiles every
// time without remembering.
//
// Sharing is safe because a [Schema] is never modified after it is compiled.
//
// Limits bound what [Compiler.LoadTool] accepts; the zero value (and a nil
// *Compiler) means the defaults. Set it before the first use.
//
// With Defer, a schema that the quick checks fully vouch for (its
// references resolve, the 2020-12 metaschema certainly accepts it, and the
// check on JSON text covers it, so valid values never need more) is compiled
// later: by [Compiler.CompileDeferred], or by its first validation that the
// check on JSON text cannot decide, whichever comes first. A schema that
// breaks a rule still fails when it is loaded, with the same error; what
// moves is only the compilation of good schemas, out of the way of serving
// the first call.
type Compiler struct {
	Limits Limits
	Defer  bool

	mu       sync.Mutex
	entries  map[compilerKey]*compileEntry
	deferred []*Schema
}

type compilerKey struct {
	kind    SchemaKind
	natural bool // compiled by ParseNaturalSchema
	text    string
}

type compileEntry struct {
	once   sync.Once
	schema *Schema
	err    error
	// done is schema once parsed without error, for the other parse of
	// the same text to share (see twin).
	done atomic.Pointer[Schema]
}

// ParseSchema is [ParseSchema], remembered by kind and text. Concurrent calls
// for the same text wait for one compile.
func (c *Compiler) ParseSchema(kind SchemaKind, text string) (*Schema, error) {
	if c == nil {
		return ParseSchema(kind, text)
	}
	return c.parse(compilerKey{kind: kind, text: text}, func() (*Schema, error) { return parseSchema(kind, text, c.limits(), c.Defer) })
}

// ParseNaturalSchema is [ParseNaturalSchema], remembered by text.
func (c *Compiler) ParseNaturalSchema(text string) (*Schema, error) {
	if c == nil {
		return ParseNaturalSchema(text)
	}
	return c.parse(compilerKey{kind: OutputSchema, natural: true, text: text}, func() (*Schema, error) { return parseNaturalSchema(text, c.limits(), c.Defer) })
}

func (c *Compiler) parse(key compilerKey, parse func() (*Schema, error)) (*Schema, error) {
	c.mu.Lock()
	if c.entries == nil {
		c.entries = make(map[compilerKey]*compileEntry)
	}
	e, ok := c.entries[key]
	if !ok {
		e = &compileEntry{}
		c.entries[key] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		if s := c.twin(key); s != nil {
			e.schema = s
			e.done.Store(s)
			return
		}
		e.schema, e.err = parse()
		if e.err != nil {
			return
		}
		e.done.Store(e.schema)
		if e.schema.doc != nil {
			c.mu.Lock()
			c.deferred = append(c.deferred, e.schema)
			c.mu.Unlock()
		}
	})
	return e.schema, e.err
}

// twin returns the schema the other parse of key's text gave, when it is
// also what this parse gives: an output schema parsed both as the natural
// schema and as the object outputSchema (a worker registers the first and
// reads the second back from function.json; a function.json may hold the
// same text under both keys). That is so when the text passes the shape
// rules and every "required" entry is a string (see Schema.plainOK): then
// both parses check the same bounds and compile the same document. nil
// when the other parse has not succeeded yet, or differs.
func (c *Compiler) twin(key compilerKey) *Schema {
	if key.kind != OutputSchema {
		return nil
	}
	other := key
	other.natural = !key.natural
	c.mu.Lock()
	e := c.entries[other]
	c.mu.Unlock()
	if e == nil {
		return nil
	}
	if s := e.done.Load(); s != nil && s.plainOK {
		return s
	}
	return nil
}

// CompileDeferred compiles every schema c deferred (see [Compiler.Defer])
// that is not compiled yet, one after another, and returns how many it
// compiled. It is safe to call while the schemas are in use.
func (c *Compiler) CompileDeferred() int {
	c.mu.Lock()
	pending := c.deferred
	c.deferred = nil
	c.mu.Unlock()
	n := 0
	for _, s := range pending {
		done := false
		s.once.Do(func() {
			s.compileDeferred()
			done = true
		})
		if done {
			n++
		}
	}
	return n
}

// Deferred reports how many schemas c deferred that [Compiler.CompileDeferred]
// has not taken up yet.
func (c *Compiler) Deferred() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.deferred)
}

// Shares reports whether c may read the schemas of a loader whose limits
// are l: it checks them against the same limits (defaults filled in on
// both sides) and defers compiling, as a host's catalog does.
func (c *Compiler) Shares(l Limits) bool {
	return c != nil && c.Defer && c.limits() == l.withDefaults()
}

// limits returns c's limits with the defaults filled in.
func (c *Compiler) limits() Limits {
	if c == nil {
		return Limits{}.withDefaults()
	}
	return c.Limits.withDefaults()
}

// Len reports how many distinct schema texts c has seen.
func (c *Compiler) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
