package worker

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/funcmcp/funcmcp/metadata"
)

// PromptHandler builds a prompt from its arguments. A nil result has no
// messages. An error fails the request: the MCP client gets a JSON-RPC
// error with its message.
//
//docs:begin handler
type PromptHandler func(ctx context.Context, pc *PromptContext) (*PromptResult, error)

//docs:end handler

// PromptContext is one prompts/get.
type PromptContext struct {
	// Name is the prompt name the client asked for.
	Name string
	// Arguments are the arguments the client gave (MCP prompt arguments
	// are strings; any other JSON value is given as its JSON text).
	Arguments map[string]string
	// SessionID is the MCP session id ("" when none).
	SessionID string
	// ClientInfo is the MCP client's implementation info (nil when unknown).
	ClientInfo *metadata.ClientInfo
	// Transport says how the request reached the host (nil when unknown).
	Transport *metadata.Transport
	// InvocationID is the host's invocation id (X-Azure-Functions-InvocationId).
	InvocationID string
	// FunctionName is the function (folder) name the host invoked.
	FunctionName string

	// ClientRequests asks the MCP client: Elicit, CreateMessage, ListRoots.
	*ClientRequests

	logBook
}

// Argument returns an argument's value and whether the client gave it.
func (pc *PromptContext) Argument(name string) (string, bool) {
	v, ok := pc.Arguments[name]
	return v, ok
}

// Header returns a header of the client's request, when the host forwarded
// it (matched case-insensitively).
func (pc *PromptContext) Header(name string) (string, bool) { return pc.Transport.Header(name) }

// Role is the role of a prompt message: [RoleUser] or [RoleAssistant].
type Role string

// The prompt message roles.
const (
	RoleUser      Role = metadata.RoleUser
	RoleAssistant Role = metadata.RoleAssistant
)

// PromptMessage is one message of a prompt: a role and one content block
// ([Text], [Image], [Audio], [EmbeddedResource], [EmbeddedBlob] or any MCP
// content block as JSON).
type PromptMessage struct {
	Role    Role
	Content Content
}

// PromptResult is what a [PromptHandler] returns.
type PromptResult struct {
	// Description describes the prompt as built ("" for none).
	Description string
	// Messages are the prompt's messages, in order.
	Messages []PromptMessage
	// Meta, when not nil, is sent as the result's _meta.
	Meta map[string]any
}

// UserMessage returns a message from the user.
func UserMessage(c Content) PromptMessage { return PromptMessage{Role: RoleUser, Content: c} }

// AssistantMessage returns a message from the assistant.
func AssistantMessage(c Content) PromptMessage { return PromptMessage{Role: RoleAssistant, Content: c} }

// TextPromptResult returns a result with one user message holding text.
func TextPromptResult(text string) *PromptResult {
	return &PromptResult{Messages: []PromptMessage{UserMessage(Text(text))}}
}

// EmbeddedResource returns an embedded text resource content block,
// {"type":"resource","resource":{"uri","mimeType","text"}}.
func EmbeddedResource(uri, mimeType, text string) Content {
	return metadata.EmbeddedResourceContent(metadata.ResourceContents{URI: uri, MimeType: mimeType, Text: &text})
}

// EmbeddedBlob returns an embedded binary resource content block; data is
// base64-encoded for you.
func EmbeddedBlob(uri, mimeType string, data []byte) Content {
	b := base64.StdEncoding.EncodeToString(data)
	return metadata.EmbeddedResourceContent(metadata.ResourceContents{URI: uri, MimeType: mimeType, Blob: &b})
}

// getPromptResult turns a handler's result into the MCP result; the
// messages are checked when it is decoded (binding.Prompt.DecodeReturnValue).
func (r *PromptResult) getPromptResult() (*metadata.GetPromptResult, error) {
	res := &metadata.GetPromptResult{Description: r.Description, Messages: make([]metadata.PromptMessage, len(r.Messages))}
	for i, m := range r.Messages {
		res.Messages[i] = metadata.PromptMessage{Role: string(m.Role), Content: compact(m.Content)}
	}
	if r.Meta != nil {
		meta, err := metadata.Marshal(r.Meta)
		if err != nil {
			return nil, fmt.Errorf("encoding _meta: %w", err)
		}
		res.Meta = meta
	}
	return res, nil
}

// PromptBuilder configures one prompt. Its methods only record: every
// problem is reported by [App.Build]. Calls for the same name accumulate on
// the same builder; for single values the last call wins, arguments are
// appended and metadata keys overwrite in place.
//
// A PromptBuilder is not safe for concurrent use.
type PromptBuilder struct {
	name         string
	title        string
	description  string
	functionName string
	arguments    []metadata.PromptArgument
	metadata     []metadata.Field
	icons        []metadata.Icon
	completions  completionSet
	handler      PromptHandler
	handlers     int
	errs         []error
	scopes       []string // WithRequiredScopes
}

// ConfigureMcpPrompt returns the builder of the prompt called name (matched
// exactly), creating it on first use.
func (a *App) ConfigureMcpPrompt(name string) *PromptBuilder {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, b := range a.prompts {
		if b.name == name {
			return b
		}
	}
	b := &PromptBuilder{name: name}
	a.prompts = append(a.prompts, b)
	return b
}

// Name returns the prompt name.
func (b *PromptBuilder) Name() string { return b.name }

// WithArgument declares an argument (written to promptArguments), for
// example
//
//	WithArgument("city", "The city to visit.", worker.Required)
//
// The host refuses a prompts/get without every required argument.
func (b *PromptBuilder) WithArgument(name, description string, presence Presence) *PromptBuilder {
	b.arguments = append(b.arguments, metadata.PromptArgument{Name: name, Description: description, Required: bool(presence)})
	return b
}

// WithTitle sets the prompt's display title.
func (b *PromptBuilder) WithTitle(title string) *PromptBuilder { b.title = title; return b }

// WithDescription sets the prompt's description.
func (b *PromptBuilder) WithDescription(description string) *PromptBuilder {
	b.description = description
	return b
}

// The setters below repeat ResourceBuilder's (and ToolBuilder's) on
// purpose: each returns its own builder, so that calls chain, and a Go
// method cannot return the type that embeds it. What they do is shared
// (setMetadata, completionSet); only the one-line bodies repeat.

// WithFunctionName sets the function folder name; the default is the
// prompt name.
func (b *PromptBuilder) WithFunctionName(name string) *PromptBuilder {
	b.functionName = name
	return b
}

// WithMetadata sets a metadata entry (advertised as the prompt's _meta), as
// [ToolBuilder.WithMetadata] does.
func (b *PromptBuilder) WithMetadata(key string, value any) *PromptBuilder {
	b.metadata, b.errs = setMetadata(b.metadata, b.errs, key, value)
	return b
}

// WithIcons sets the prompt's icons (written as icons, which the Azure
// Functions MCP extension advertises too).
func (b *PromptBuilder) WithIcons(icons ...Icon) *PromptBuilder {
	b.icons = append([]metadata.Icon(nil), icons...)
	return b
}

// WithRequiredScopes names OAuth scopes a caller's token must grant to
// get this prompt, as [ToolBuilder.WithRequiredScopes] does for a tool: funchost
// refuses the request without them (or without OAuth), and so does the
// worker, with a -32600 failure reply naming the scopes (a [*ScopeError]).
func (b *PromptBuilder) WithRequiredScopes(scopes ...string) *PromptBuilder {
	b.scopes, b.errs = addScopes(b.scopes, b.errs, scopes)
	return b
}

// WithCompletion gives an argument a fixed list of completion values. A
// completion/complete request for it gets the values that start with what
// the user typed (compared case-insensitively), in this order, at most 100.
// Completions are a funcmcp feature: the Azure Functions MCP extension does
// not offer them, and the declaration does nothing there.
func (b *PromptBuilder) WithCompletion(argument string, values ...string) *PromptBuilder {
	b.completions.fixed(argument, values)
	return b
}

// WithCompletionFunc lets f compute the completion values of an argument;
// funchost asks the worker for them (see metadata.KeyCompletions). At most
// 100 values are sent, with the total.
func (b *PromptBuilder) WithCompletionFunc(argument string, f CompletionHandler) *PromptBuilder {
	b.errs = b.completions.dynamic(b.errs, argument, f)
	return b
}

// Handle sets the handler. A prompt has exactly one (Handle or
// [AddPrompt]).
func (b *PromptBuilder) Handle(h PromptHandler) *PromptBuilder {
	if h == nil {
		b.errs = append(b.errs, ruleErr(ErrNoHandler, "Handle was given a nil handler"))
		return b
	}
	b.handler = h
	b.handlers++
	return b
}

func (b *PromptBuilder) function() string { return cmp.Or(b.functionName, b.name) }

func (b *PromptBuilder) options() *metadata.PromptOptions {
	return &metadata.PromptOptions{
		Name: b.name, Title: b.title, Description: b.description, Arguments: b.arguments,
		Metadata: b.metadata, Icons: b.icons, RequiredScopes: slices.Clone(b.scopes), Completions: b.completions.sources(),
	}
}

// PromptHandlerFor is a typed prompt handler: it receives the arguments
// decoded into In.
//
//docs:begin typed
type PromptHandlerFor[In any] func(ctx context.Context, pc *PromptContext, in In) (*PromptResult, error)

//docs:end typed

// AddPrompt adds a typed prompt whose arguments are the fields of the
// struct In: each exported string (or *string) field is an argument named
// by its json tag (the field name without one; "-" skips it), required
// unless the tag says omitempty or omitzero, described by its jsonschema
// (or description) tag. Any other field type is a configuration error. It
// returns the prompt's builder, for the other settings; arguments declared
// with WithArgument come after In's.
func AddPrompt[In any](a *App, name string, h PromptHandlerFor[In]) *PromptBuilder {
	b := a.ConfigureMcpPrompt(name)
	if h == nil {
		b.errs = append(b.errs, ruleErr(ErrNoHandler, "AddPrompt was given a nil handler"))
		return b
	}
	fields, args, err := promptFields(reflect.TypeFor[In]())
	if err != nil {
		b.errs = append(b.errs, err)
		return b
	}
	b.arguments = append(args, b.arguments...)
	b.Handle(func(ctx context.Context, pc *PromptContext) (*PromptResult, error) {
		var in In
		v := reflect.ValueOf(&in).Elem()
		for _, f := range fields {
			s, ok := pc.Arguments[f.name]
			if !ok {
				continue
			}
			fv := v.FieldByIndex(f.index)
			if f.pointer {
				fv.Set(reflect.ValueOf(&s))
			} else {
				fv.SetString(s)
			}
		}
		return h(ctx, pc, in)
	})
	return b
}

// promptField is a field of a typed prompt's input.
type promptField struct {
	name    string
	index   []int
	pointer bool
}

// promptFields reads the arguments of a typed prompt from t.
func promptFields(t reflect.Type) ([]promptField, []metadata.PromptArgument, error) {
	if t.Kind() != reflect.Struct {
		return nil, nil, ruleErr(ErrPromptInputType, "%v: %s is not a struct", ErrPromptInputType, t)
	}
	var (
		fields []promptField
		args   []metadata.PromptArgument
	)
	for _, sf := range reflect.VisibleFields(t) {
		if sf.Anonymous {
			if sf.Type.Kind() == reflect.Pointer {
				return nil, nil, ruleErr(ErrPromptInputType, "%v: embedded pointer %s is not supported", ErrPromptInputType, sf.Type)
			}
			continue // its fields are visible fields too
		}
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" && opts == "" {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		pointer := sf.Type.Kind() == reflect.Pointer && sf.Type.Elem().Kind() == reflect.String
		if sf.Type.Kind() != reflect.String && !pointer {
			return nil, nil, ruleErr(ErrPromptInputType, "%v: field %s is %s; prompt arguments are strings", ErrPromptInputType, sf.Name, sf.Type)
		}
		optional := false
		for o := range strings.SplitSeq(opts, ",") {
			optional = optional || o == "omitempty" || o == "omitzero"
		}
		fields = append(fields, promptField{name: name, index: sf.Index, pointer: pointer})
		args = append(args, metadata.PromptArgument{
			Name:        name,
			Description: cmp.Or(sf.Tag.Get("jsonschema"), sf.Tag.Get("description")),
			Required:    !optional,
		})
	}
	return fields, args, nil
}
