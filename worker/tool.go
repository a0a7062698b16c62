package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"

	"github.com/funcmcp/funcmcp/internal/jsonx"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
	"github.com/funcmcp/funcmcp/worker/internal/nonil"
	"github.com/funcmcp/funcmcp/worker/internal/schema"
)

// ToolHandler is a raw tool handler: it reads the call from tc and returns
// the result. A returned error becomes an isError result with its message.
type ToolHandler func(ctx context.Context, tc *ToolContext) (*Result, error)

// invoker runs one call of a built tool.
type invoker func(ctx context.Context, tc *ToolContext, t *tool) (*Result, error)

// ToolContext is one tool call.
type ToolContext struct {
	// Name is the tool name the client called.
	Name string
	// Arguments are the call's arguments, as raw JSON (nil when none).
	Arguments map[string]json.RawMessage
	// SessionID is the MCP session id ("" when none).
	SessionID string
	// ClientInfo is the MCP client's implementation info (nil when unknown).
	ClientInfo *metadata.ClientInfo
	// Transport says how the call reached the host (nil when unknown).
	Transport *metadata.Transport
	// InvocationID is the host's invocation id (X-Azure-Functions-InvocationId).
	InvocationID string
	// FunctionName is the function (folder) name the host invoked.
	FunctionName string

	// rawArgs is the arguments object as received, when known: typed
	// handlers decode it directly.
	rawArgs json.RawMessage

	// notify is the host's notification channel for this call, nil when
	// there is none (see progress.go).
	notify *notifier

	// ClientRequests asks the MCP client: Elicit, CreateMessage, ListRoots.
	*ClientRequests

	mu   sync.Mutex
	logs []string
}

// Logf adds a line, formatted as by fmt.Sprintf, to the invocation's Logs,
// which the host writes to the function's log. It is safe for concurrent use.
func (tc *ToolContext) Logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	tc.mu.Lock()
	tc.logs = append(tc.logs, line)
	tc.mu.Unlock()
}

// Logs returns the lines logged so far.
func (tc *ToolContext) Logs() []string {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return append([]string(nil), tc.logs...)
}

// Argument returns the argument called name, matched exactly first and then
// case-insensitively.
func (tc *ToolContext) Argument(name string) (json.RawMessage, bool) {
	c := metadata.ToolInvocationContext{Arguments: tc.Arguments}
	return c.Argument(name)
}

// Header returns a header of the client's request, when the host forwarded
// it (matched case-insensitively). The headers are decoded on the first
// read ([metadata.Headers]): a tool that reads none does not pay for them.
func (tc *ToolContext) Header(name string) (string, bool) { return tc.Transport.Header(name) }

// BindArguments decodes the arguments object into v (a pointer), as
// [AddTool] does for its In value. A failure is an *ArgumentError naming the
// argument.
func (tc *ToolContext) BindArguments(v any) error { return bindArguments(tc.rawArgs, tc.Arguments, v) }

// ArgumentError is an argument that cannot be decoded into the tool's input.
type ArgumentError struct {
	Argument string // "" when the problem is not tied to one argument
	Reason   string
}

func (e *ArgumentError) Error() string {
	if e.Argument == "" {
		return "invalid arguments: " + e.Reason
	}
	return fmt.Sprintf("invalid argument %q: %s", e.Argument, e.Reason)
}

// bindArguments decodes the arguments into v: from raw, the object as
// received, when there is one, else from args.
func bindArguments(raw json.RawMessage, args map[string]json.RawMessage, v any) error {
	data := raw
	if data == nil {
		if len(args) == 0 {
			return nil
		}
		var err error
		if data, err = json.Marshal(args); err != nil {
			return &ArgumentError{Reason: err.Error()}
		}
	}
	err := json.Unmarshal(data, v)
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		name, rest, _ := strings.Cut(te.Field, ".")
		reason := fmt.Sprintf("got %s, want %s", jsonWord(te.Value), typeWord(te.Type))
		if rest != "" {
			reason = fmt.Sprintf("at %s: %s", rest, reason)
		}
		return &ArgumentError{Argument: argName(args, name), Reason: reason}
	}
	// Find the argument to blame by decoding them one at a time.
	names := make([]string, 0, len(args))
	for k := range args {
		names = append(names, k)
	}
	sort.Strings(names)
	t := reflect.TypeOf(v).Elem()
	for _, k := range names {
		one, _ := json.Marshal(map[string]json.RawMessage{k: args[k]})
		if e := json.Unmarshal(one, reflect.New(t).Interface()); e != nil {
			return &ArgumentError{Argument: k, Reason: trimJSONPrefix(e.Error())}
		}
	}
	return &ArgumentError{Reason: trimJSONPrefix(err.Error())}
}

// argName returns the client's spelling of the argument matched by the
// decoder's field name.
func argName(args map[string]json.RawMessage, name string) string {
	keys := func(yield func(string, string) bool) {
		for k := range args {
			if !yield(k, k) {
				return
			}
		}
	}
	if k, ok := metadata.LookupFold(keys, name); ok {
		return k
	}
	return name
}

func trimJSONPrefix(s string) string { return strings.TrimPrefix(s, "json: ") }

func jsonWord(v string) string {
	switch {
	case v == "bool":
		return "boolean"
	case strings.HasPrefix(v, "number"):
		return v
	}
	return v
}

func typeWord(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return t.String()
}

// ToolHandlerFor is a typed tool handler, shaped like the official Go SDK's
// mcp.ToolHandlerFor: it receives the arguments decoded into In and returns
// a result beside the typed output.
//
// The result (nil for none) carries content blocks, IsError and Meta; out
// becomes structuredContent. A returned error becomes an isError result
// with its message, and result and out are then ignored.
//
//docs:begin handler
type ToolHandlerFor[In, Out any] func(ctx context.Context, tc *ToolContext, in In) (result *Result, out Out, err error)

//docs:end handler

var anyType = reflect.TypeFor[any]()

// AddTool adds a typed tool: arguments are decoded into In, and the
// handler's result and Out become the tool result. It returns the tool's
// builder, for the other settings.
//
// Schemas are inferred from the types (see the package documentation for the
// rules): In must describe a JSON object; its schema is emitted as
// inputSchema (with useWorkerInputSchema) and its top-level fields as
// toolProperties, for older hosts. Out's schema is emitted as outputSchema;
// Out = any means no output schema. An explicit WithInputSchema /
// WithOutputSchema wins over the inferred one.
//
// Out's natural schema may have any root (SEP-2106). A struct or map Out is
// an object schema, sent as it is. Any other Out (slice, string, number, …)
// is a natural non-object schema: function.json gets its object projection
// as outputSchema and the natural schema as naturalOutputSchema, and the
// value is sent wrapped, {"result": value} (see [ToolBuilder.WithOutputField]
// and [ToolBuilder.WithOutputSchema]); funchost gives 2026-07-28 clients the
// natural schema and value. A nil map is sent as {} and a nil slice as [].
//
// A nil *Out is not an error. With a result marked IsError, no
// structuredContent is sent; otherwise the zero value of Out's element type
// is sent, as the official Go SDK does, and must then match the schema.
//
// The content blocks of the result are kept, in order; the text copy of
// structuredContent is added as [ToolBuilder.WithTextCopy] says.
func AddTool[In, Out any](a *App, toolName string, h ToolHandlerFor[In, Out]) *ToolBuilder {
	b := a.ConfigureMcpTool(toolName)
	if h == nil {
		b.errs = append(b.errs, ruleErr(ErrNoHandler, "AddTool was given a nil handler"))
		return b
	}
	inType, outType := reflect.TypeFor[In](), reflect.TypeFor[Out]()

	if in, err := inputSchema(&a.schemas, inType); err != nil {
		b.errs = append(b.errs, err)
	} else {
		b.inferredInput = in
	}
	untyped := outType == anyType
	if !untyped {
		if out, err := outputSchema(&a.schemas, outType); err != nil {
			b.errs = append(b.errs, err)
		} else {
			b.inferredOutput = out
		}
	}
	var elemZero any // the value sent for a nil *Out
	if outType.Kind() == reflect.Pointer {
		elemZero = reflect.New(outType.Elem()).Elem().Interface()
	}
	b.setInvoker(func(ctx context.Context, tc *ToolContext, t *tool) (*Result, error) {
		var in In
		if err := tc.BindArguments(&in); err != nil {
			return nil, err
		}
		res, out, err := h(ctx, tc, in)
		if err != nil {
			return nil, err
		}
		if res == nil {
			res = &Result{}
		} else {
			copied := *res // the handler may reuse its result
			res = &copied
		}
		var value any = out
		switch {
		case untyped:
			if value == nil {
				return res, nil
			}
		case elemZero != nil && reflect.ValueOf(value).IsNil():
			if res.IsError {
				return res, nil
			}
			value = elemZero
		}
		data, err := metadata.Marshal(nonil.Value(value))
		if err != nil {
			return nil, fmt.Errorf("encoding the result: %w", err)
		}
		if !untyped {
			data = structuredValue(data, outType)
		}
		res.StructuredContent = json.RawMessage(data)
		return res, nil
	})
	return b
}

// structuredValue turns the JSON of a typed output into its natural
// structuredContent: a nil map or slice becomes {} or []. A non-object value
// is wrapped later, with every other tool's (see projecting).
func structuredValue(data []byte, outType reflect.Type) []byte {
	if jsonx.IsNull(data) {
		switch deref(outType).Kind() {
		case reflect.Map, reflect.Struct:
			data = []byte("{}")
		case reflect.Slice, reflect.Array:
			data = []byte("[]")
		}
	}
	return data
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

func inputSchema(c *binding.Compiler, t reflect.Type) (string, error) {
	s, err := schema.For(t)
	if err != nil {
		return "", ruleErr(ErrInputType, "%v: %v", ErrInputType, err)
	}
	if s.Type != "object" {
		return "", ruleErr(ErrInputType, "%v: %s does not encode as a JSON object (use a struct or a map with string keys)", ErrInputType, t)
	}
	return checked(c, binding.InputSchema, s, ErrInputType)
}

// outputSchema returns Out's natural schema, whatever its root; the object
// projection is made at build time, when the output field is known.
func outputSchema(c *binding.Compiler, t reflect.Type) (string, error) {
	s, err := schema.For(t)
	if err != nil {
		return "", ruleErr(ErrOutputType, "%v: %v", ErrOutputType, err)
	}
	return checked(c, binding.OutputSchema, s, ErrOutputType)
}

// checked encodes a generated schema and checks it: an input schema with
// [binding.ParseSchema], an output schema (natural, any root) with
// [binding.ParseNaturalSchema].
func checked(c *binding.Compiler, kind binding.SchemaKind, s *jsonschema.Schema, rule error) (string, error) {
	data, ok := schema.Encode(s)
	if !ok {
		marshalled, err := json.Marshal(s)
		if err != nil {
			return "", ruleErr(rule, "%v: %v", rule, err)
		}
		data = metadata.UnescapeHTML(marshalled)
	}
	parse := func(text string) (*binding.Schema, error) { return c.ParseSchema(kind, text) }
	if kind == binding.OutputSchema {
		parse = c.ParseNaturalSchema
	}
	ps, err := parse(string(data))
	if err != nil {
		return "", ruleErr(rule, "%v: the generated schema is rejected: %v", rule, err)
	}
	return ps.String(), nil
}
