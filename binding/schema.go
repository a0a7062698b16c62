package binding

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/funcmcp/funcmcp/internal/jsonx"
)

// SchemaKind says which of a tool's schemas a check is about.
type SchemaKind int

const (
	// InputSchema is the schema of a tool's arguments.
	InputSchema SchemaKind = iota
	// OutputSchema is the schema of a tool's structuredContent.
	OutputSchema
)

// String returns "input schema" or "output schema".
func (k SchemaKind) String() string {
	if k == OutputSchema {
		return "output schema"
	}
	return "input schema"
}

// ErrEmptySchema is returned (wrapped) for an empty or blank schema where one
// is required.
var ErrEmptySchema = errors.New("schema is empty")

// SyntaxError is a schema that is not valid JSON.
type SyntaxError struct {
	Kind SchemaKind
	Err  error // the JSON decoder's error
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("%s is not valid JSON: %v", e.Kind, e.Err)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// ShapeError is a schema whose root breaks one of the MCP tool schema rules
// (the rules the Azure Functions MCP extension applies).
type ShapeError struct {
	Kind SchemaKind
	Rule string // the rule broken, e.g. `must be a JSON object`
}

func (e *ShapeError) Error() string { return fmt.Sprintf("%s %s", e.Kind, e.Rule) }

// The shape rules, as ShapeError.Rule values.
const (
	RuleObjectRoot = "must be a JSON object"
	RuleTypeObject = `must have a root "type" property with value "object"`
	RuleProperties = `"properties" must be a JSON object when present`
	RuleRequired   = `"required" must be a JSON array when present`
)

// CompileError is a schema that is JSON of the right shape but not a valid
// JSON Schema 2020-12 document (it breaks the metaschema, or a $ref cannot be
// resolved offline).
type CompileError struct {
	Kind SchemaKind
	Err  error // from the JSON Schema compiler
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("%s is not a valid JSON Schema 2020-12 document: %s", e.Kind, compileReason(e.Err))
}

// compileReason says why a schema did not compile, in one line: the leaf
// metaschema failures (with their JSON pointers into the schema), or the
// reference that cannot be resolved offline.
func compileReason(err error) string {
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if errors.As(err, &sve) && errors.As(sve.Err, &ve) {
		ps := problems(ve)
		parts := make([]string, len(ps))
		for i, p := range ps {
			parts[i] = fmt.Sprintf("at '%s': %s", p.InstanceLocation, p.Message)
		}
		return strings.Join(parts, "; ")
	}
	var le *jsonschema.LoadURLError
	if errors.As(err, &le) {
		return fmt.Sprintf("%q cannot be loaded: only references within the schema and the standard metaschemas resolve; nothing is fetched", le.URL)
	}
	return jsonx.OneLine(err.Error())
}

func (e *CompileError) Unwrap() error { return e.Err }

// LimitError is a schema larger or deeper than the bounds of [Limits].
type LimitError struct {
	Kind   SchemaKind
	Reason string // e.g. "is 300000 bytes, more than the limit of 262144"
}

func (e *LimitError) Error() string { return fmt.Sprintf("%s %s", e.Kind, e.Reason) }

// RefError is a schema with a local $ref that does not resolve, or a cycle of
// references that never moves into the instance (validation would never end).
type RefError struct {
	Kind SchemaKind
	Err  error // every problem, joined
}

func (e *RefError) Error() string { return fmt.Sprintf("%s: %s", e.Kind, jsonx.OneLine(e.Err.Error())) }

func (e *RefError) Unwrap() error { return e.Err }

// checkLimits applies the size and nesting bounds to schema text, before it
// is decoded.
func checkLimits(kind SchemaKind, text string, lim Limits) error {
	if len(text) > lim.SchemaBytes {
		return &LimitError{Kind: kind, Reason: fmt.Sprintf("is %d bytes, more than the limit of %d", len(text), lim.SchemaBytes)}
	}
	if depth, _ := jsonx.Measure([]byte(text)); depth > lim.SchemaDepth {
		return &LimitError{Kind: kind, Reason: fmt.Sprintf("nests %d levels, more than the limit of %d", depth, lim.SchemaDepth)}
	}
	return nil
}

// Schema is a checked and compiled tool schema.
type Schema struct {
	kind    SchemaKind
	text    json.RawMessage   // compact, key order and number text kept
	textSum [sha256.Size]byte // of text, for Digest
	fast    *fastNode         // the check on JSON text, nil when the schema is outside its subset
	// required are the string entries of the root "required", in order.
	required []string
	// plainOK says that ParseSchema and ParseNaturalSchema of text give
	// this same schema: the root passes the shape rules of CheckShape and
	// every entry of its "required" is a string (lenientRequired keeps
	// the document as it is).
	plainOK bool

	// compiled is the full validator. A deferred schema (see
	// Compiler.Defer) has doc instead until the first of its first full
	// validation and Compiler.CompileDeferred compiles it, once.
	once       sync.Once
	doc        any
	compiled   *jsonschema.Schema
	compileErr error
}

// validator returns the compiled schema, compiling a deferred one now.
func (s *Schema) validator() (*jsonschema.Schema, error) {
	s.once.Do(s.compileDeferred)
	return s.compiled, s.compileErr
}

// compileDeferred compiles a deferred schema; run once, by s.once.
func (s *Schema) compileDeferred() {
	if s.doc == nil {
		return
	}
	compiles.Add(1)
	s.compiled, s.compileErr = compileAt(vouchedURL, s.doc)
	s.doc = nil
}

// digestVersion names the rules a [Schema.Digest] vouches for; it changes
// whenever what a successful validation means changes.
const digestVersion = "funcmcp-output-check/1\x00"

// Digest returns the check a worker sends with a result it validated: the
// hex SHA-256 of the validation rules' version, the schema text and the
// structuredContent bytes. A host that computes the same digest from its
// own copy of the schema and the bytes it received knows that exactly this
// content was validated against exactly this schema; any difference (a
// stale function.json, other bytes, other rules) gives another digest, and
// the host validates again.
func (s *Schema) Digest(structured []byte) string {
	h := sha256.New()
	h.Write([]byte(digestVersion))
	h.Write(s.textSum[:])
	h.Write(structured)
	var sum [sha256.Size]byte
	return hex.EncodeToString(h.Sum(sum[:0]))
}

// Kind returns whether this is an input or output schema.
func (s *Schema) Kind() SchemaKind { return s.kind }

// JSON returns the compact schema text. Callers must not modify it.
func (s *Schema) JSON() json.RawMessage { return s.text }

// String returns the compact schema text.
func (s *Schema) String() string { return string(s.text) }

// CheckShape applies the MCP tool schema rules to schema text without
// compiling it: valid JSON, the root an object whose "type" is the string
// "object", "properties" an object and "required" an array when present. It
// returns the compact text.
func CheckShape(kind SchemaKind, text string) (json.RawMessage, error) {
	compact, _, err := decodeShaped(kind, text)
	return compact, err
}

// decodeShaped is CheckShape that also returns the decoded document (as
// [DecodeJSON] decodes it), decoding the text once.
func decodeShaped(kind SchemaKind, text string) (json.RawMessage, any, error) {
	compact, err := compactSchema(kind, text)
	if err != nil {
		return nil, nil, err
	}
	if compact[0] != '{' {
		return nil, nil, &ShapeError{Kind: kind, Rule: RuleObjectRoot}
	}
	doc, err := DecodeJSON(compact)
	if err != nil {
		return nil, nil, &SyntaxError{Kind: kind, Err: err}
	}
	root, _ := doc.(map[string]any)
	if typ, ok := root["type"].(string); !ok || typ != "object" {
		return nil, nil, &ShapeError{Kind: kind, Rule: RuleTypeObject}
	}
	if p, ok := root["properties"]; ok {
		if _, ok := p.(map[string]any); !ok {
			return nil, nil, &ShapeError{Kind: kind, Rule: RuleProperties}
		}
	}
	if r, ok := root["required"]; ok {
		if _, ok := r.([]any); !ok {
			return nil, nil, &ShapeError{Kind: kind, Rule: RuleRequired}
		}
	}
	return compact, doc, nil
}

// compactSchema checks that schema text is not blank and is valid JSON, and
// returns it compact.
func compactSchema(kind SchemaKind, text string) (json.RawMessage, error) {
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("%s: %w", kind, ErrEmptySchema)
	}
	compact, err := jsonx.AppendCompact(nil, []byte(text))
	if err != nil {
		return nil, &SyntaxError{Kind: kind, Err: err}
	}
	return compact, nil
}

// ParseSchema checks schema text and compiles it as a JSON Schema 2020-12
// document (the default dialect when it has no "$schema"). In order: the size
// and nesting bounds of [Limits] (the defaults; see [Compiler] for others),
// the shape rules of [CheckShape], the local $ref checks (each must resolve,
// as a JSON pointer or an $anchor, and no cycle of references and in-place
// applicators may never move into the instance), then compilation.
// Compilation is offline: no remote or file $ref is ever loaded. As in the MCP
// extension, non-string entries of the root "required" are accepted (they are
// left out of the compiled validator). The error is one of *LimitError,
// *SyntaxError, *ShapeError, *RefError, *CompileError, or wraps
// ErrEmptySchema.
func ParseSchema(kind SchemaKind, text string) (*Schema, error) {
	return parseSchema(kind, text, Limits{}.withDefaults(), false)
}

func parseSchema(kind SchemaKind, text string, lim Limits, deferOK bool) (*Schema, error) {
	if err := checkLimits(kind, text, lim); err != nil {
		return nil, err
	}
	compact, doc, err := decodeShaped(kind, text)
	if err != nil {
		return nil, err
	}
	plainOK := stringsOnlyRequired(doc) // before lenientRequired changes doc
	s, err := compileDoc(kind, compact, lenientRequired(doc), deferOK)
	if err == nil {
		s.plainOK = plainOK
	}
	return s, err
}

// stringsOnlyRequired reports whether every entry of a decoded schema's
// root "required" is a string (true when there is none): lenientRequired
// keeps such a document as it is.
func stringsOnlyRequired(doc any) bool {
	root, _ := doc.(map[string]any)
	req, _ := root["required"].([]any)
	for _, r := range req {
		if _, ok := r.(string); !ok {
			return false
		}
	}
	return true
}

// plainShape reports whether a decoded document passes the shape rules of
// CheckShape and has only string "required" entries: ParseSchema of its
// text (as an output schema) compiles the document as it is.
func plainShape(doc any) bool {
	root, ok := doc.(map[string]any)
	if !ok {
		return false
	}
	if typ, ok := root["type"].(string); !ok || typ != "object" {
		return false
	}
	if p, ok := root["properties"]; ok {
		if _, ok := p.(map[string]any); !ok {
			return false
		}
	}
	if r, ok := root["required"]; ok {
		if _, ok := r.([]any); !ok {
			return false
		}
	}
	return stringsOnlyRequired(doc)
}

// RuleSchemaRoot is the rule a natural output schema breaks when its root is
// neither an object nor a boolean.
const RuleSchemaRoot = "must be a JSON object or boolean"

// ParseNaturalSchema checks and compiles a natural output schema: any JSON
// Schema 2020-12 document (SEP-2106, MCP 2026-07-28), so the root may be any
// object or a boolean — array, scalar, typeless and oneOf roots included.
// Bounds, $ref checks and compilation are as in [ParseSchema]. The error is
// one of *LimitError, *SyntaxError, *ShapeError (a root that is not an
// object or boolean), *RefError, *CompileError, or wraps ErrEmptySchema.
func ParseNaturalSchema(text string) (*Schema, error) {
	return parseNaturalSchema(text, Limits{}.withDefaults(), false)
}

func parseNaturalSchema(text string, lim Limits, deferOK bool) (*Schema, error) {
	const kind = OutputSchema
	if err := checkLimits(kind, text, lim); err != nil {
		return nil, err
	}
	compact, err := compactSchema(kind, text)
	if err != nil {
		return nil, err
	}
	if c := compact[0]; c != '{' && !bytes.Equal(compact, []byte("true")) && !bytes.Equal(compact, []byte("false")) {
		return nil, &ShapeError{Kind: kind, Rule: RuleSchemaRoot}
	}
	doc, err := DecodeJSON(compact)
	if err != nil {
		return nil, &SyntaxError{Kind: kind, Err: err}
	}
	s, err := compileDoc(kind, compact, doc, deferOK)
	if err == nil {
		s.plainOK = plainShape(doc)
	}
	return s, err
}

// compileDoc compiles a decoded schema document offline as JSON Schema
// 2020-12. With deferOK, a document that the quick metaschema check vouches
// for and that the fast check covers is only checked now (its references
// resolve, the metaschema accepts it: nothing is left that could fail) and
// compiled when first needed.
func compileDoc(kind SchemaKind, compact json.RawMessage, doc any, deferOK bool) (*Schema, error) {
	if err := checkRefs(doc); err != nil {
		return nil, &RefError{Kind: kind, Err: err}
	}
	vouched := metaValid(doc)
	if deferOK && vouched {
		if fast := compileFast(doc); fast != nil {
			return &Schema{kind: kind, text: compact, textSum: sha256.Sum256(compact), fast: fast, required: rootRequired(doc), doc: doc}, nil
		}
	}
	url := "mem:///schema.json"
	if vouched {
		// The compiler validates every document against the metaschema
		// except those under json-schema.org (its own metaschemas); a
		// document metaValid vouches for is compiled there, so that work
		// is not done twice. Only the host part of this URL differs: every
		// location reported (a JSON pointer) is the same.
		url = vouchedURL
	}
	compiles.Add(1)
	compiled, err := compileAt(url, doc)
	if err != nil {
		return nil, &CompileError{Kind: kind, Err: err}
	}
	return &Schema{kind: kind, text: compact, textSum: sha256.Sum256(compact), fast: compileFast(doc), required: rootRequired(doc), compiled: compiled}, nil
}

// rootRequired returns the string entries of a decoded schema's root
// "required", in order.
func rootRequired(doc any) []string {
	root, _ := doc.(map[string]any)
	req, _ := root["required"].([]any)
	var names []string
	for _, r := range req {
		if name, ok := r.(string); ok {
			names = append(names, name)
		}
	}
	return names
}

// compileAt compiles doc as the resource url, offline.
func compileAt(url string, doc any) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	// An empty scheme table refuses every URL that is not an embedded metaschema.
	c.UseLoader(jsonschema.SchemeURLLoader{})
	if err := c.AddResource(url, doc); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// vouchedURL is where a schema that [metaValid] vouches for is compiled;
// no metaschema has this name.
const vouchedURL = "https://json-schema.org/funcmcp/checked-schema.json"

// compiles counts schema compilations, for [CompileCount].
var compiles atomic.Uint64

// CompileCount is how many schemas this process has compiled so far. Schemas
// are compiled when tools are loaded, except those a [Compiler] defers,
// which are compiled by [Compiler.CompileDeferred] or by the first
// validation that needs the full validator (never one of a value the check
// on JSON text accepts): benchmarks and tests read it before and after
// calls to check that.
func CompileCount() uint64 { return compiles.Load() }

// lenientRequired drops the non-string entries of the root "required" from
// the document that is compiled (the schema text is kept as written). The MCP
// extension accepts such entries and so does funcmcp, although the JSON Schema
// metaschema does not; they can never be satisfied by a property name anyway.
func lenientRequired(doc any) any {
	root, ok := doc.(map[string]any)
	if !ok {
		return doc
	}
	req, ok := root["required"].([]any)
	if !ok {
		return doc
	}
	names := make([]any, 0, len(req))
	for _, r := range req {
		if _, ok := r.(string); ok {
			names = append(names, r)
		}
	}
	if len(names) == len(req) {
		return doc
	}
	root["required"] = names
	return root
}

// Validate checks a decoded JSON value (as produced by [DecodeJSON] or
// encoding/json into any) against the schema. A failure is a
// *ValidationError.
func (s *Schema) Validate(v any) error {
	compiled, err := s.validator()
	if err != nil {
		// Not expected: a schema is deferred only when nothing can fail.
		return &ValidationError{Kind: s.kind, Problems: []Problem{{Message: "the schema did not compile: " + compileReason(err)}}}
	}
	err = compiled.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if errors.As(err, &ve) {
		return &ValidationError{Kind: s.kind, Problems: problems(ve)}
	}
	return &ValidationError{Kind: s.kind, Problems: []Problem{{Message: err.Error()}}}
}

// ValidateText validates JSON text. Most schemas are checked straight on
// the text in one pass, without building Go values (see compileFast); when
// that check cannot vouch for the value, the text is decoded once and
// validated by the compiled schema, whose *ValidationError is returned. A
// text that is not JSON gives a *ValidationError too.
func (s *Schema) ValidateText(data []byte) error {
	if s.certainlyValid(data) {
		return nil
	}
	v, err := DecodeJSON(data)
	if err != nil {
		return &ValidationError{Kind: s.kind, Problems: []Problem{{Message: "not valid JSON: " + err.Error()}}}
	}
	return s.Validate(v)
}

// certainlyValid is the check on JSON text alone: true only when data is
// valid JSON that the compiled schema accepts.
func (s *Schema) certainlyValid(data []byte) bool {
	return s.fast != nil && fastValid(s.fast, data)
}

// ValidateJSON decodes data once and validates it, returning the decoded value.
func (s *Schema) ValidateJSON(data []byte) (any, error) {
	v, err := DecodeJSON(data)
	if err != nil {
		return nil, err
	}
	return v, s.Validate(v)
}

// Problem is one leaf failure of a validation: where in the instance, which
// schema keyword, and what was wrong.
type Problem struct {
	InstanceLocation string // JSON pointer into the value, "" for the root
	KeywordLocation  string // JSON pointer into the schema, e.g. /properties/temp/type
	Message          string // e.g. "got string, want number"
}

func (p Problem) String() string {
	if p.KeywordLocation == "" && p.InstanceLocation == "" {
		return p.Message
	}
	return fmt.Sprintf("at '%s' (%s): %s", p.InstanceLocation, p.KeywordLocation, p.Message)
}

// ValidationError is a value that does not match a schema.
type ValidationError struct {
	Kind     SchemaKind
	Problems []Problem
}

func (e *ValidationError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.String()
	}
	return fmt.Sprintf("does not match the %s: %s", e.Kind, strings.Join(parts, "; "))
}

var printer = message.NewPrinter(language.English)

// problems flattens a jsonschema error tree to its leaves, sorted by instance
// then keyword location. A leaf's keyword
// location is the JSON pointer of the failing keyword within the schema
// document (through a $ref, the location of the schema it points to).
func problems(ve *jsonschema.ValidationError) []Problem {
	var out []Problem
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			if ap, ok := e.ErrorKind.(*kind.AdditionalProperties); ok {
				// Listed in map order by the validator.
				sort.Strings(ap.Properties)
			}
			out = append(out, Problem{
				InstanceLocation: pointer(e.InstanceLocation),
				KeywordLocation:  schemaPointer(e.SchemaURL) + pointer(e.ErrorKind.KeywordPath()),
				Message:          e.ErrorKind.LocalizedString(printer),
			})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	// The validator visits properties in map order; sort for stable messages.
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].InstanceLocation != out[j].InstanceLocation {
			return out[i].InstanceLocation < out[j].InstanceLocation
		}
		return out[i].KeywordLocation < out[j].KeywordLocation
	})
	return out
}

// schemaPointer returns the JSON pointer fragment of a schema location such
// as mem:///schema.json#/properties/temp, unescaped.
func schemaPointer(loc string) string {
	_, frag, ok := strings.Cut(loc, "#")
	if !ok {
		return ""
	}
	if u, err := url.PathUnescape(frag); err == nil {
		return u
	}
	return frag
}

func pointer(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		sb.WriteByte('/')
		sb.WriteString(jsonx.EscapePointerToken(t))
	}
	return sb.String()
}
