package binding

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// Prompt is everything needed to serve one prompt, read once at load from
// its mcpPromptTrigger binding.
type Prompt struct {
	Function string // the function (folder) name
	File     string // the function.json path, "" when unknown
	// Binding is the binding "name": the Data key of the invocation.
	Binding string

	// Name is the promptName.
	Name        string
	Title       string
	Description string
	// Arguments are the decoded promptArguments; nil when the key is
	// absent (the prompt is listed without "arguments").
	Arguments []metadata.PromptArgument
	// Icons are the decoded icons.
	Icons []metadata.Icon
	// Metadata is the compact metadata object (the _meta); nil for none.
	Metadata json.RawMessage
	// Completions of arguments (a funcmcp key).
	Completions []metadata.CompletionSource
	// UseResultSchema says the worker returns the prompt result envelope.
	UseResultSchema bool
	// ArgumentBindings are the function's mcpPromptArgument input
	// bindings. The extension fills each from the prompt's arguments and
	// does not list them: only promptArguments is listed.
	ArgumentBindings []PromptArgumentBinding
	// RequiredScopes are the OAuth scopes a caller's token must grant to
	// get it (a funcmcp key); nil when none.
	RequiredScopes []string
}

// PromptArgumentBinding is an mcpPromptArgument input binding.
type PromptArgumentBinding struct {
	Name     string // the binding name: the Data key of its value
	Argument string // argumentName
	Required bool   // isRequired
}

// LoadPrompt reads the mcpPromptTrigger binding b of fn (and fn's
// mcpPromptArgument bindings) and decides whether it can be served. It is
// the one rule of both sides: the worker SDK runs it on what it emits, the
// host at load. Keys are matched case-insensitively. Rules: "promptName" is
// a required string (not blank); "title" and "description" optional
// strings; "promptArguments" a string holding a JSON array of {name,
// title?, description?, required?} (member names matched
// case-insensitively, as the extension decodes them) whose names are not
// blank and not repeated; "icons" ([ParseIcons]); "metadata" a string
// holding a JSON object (or the object); "useResultSchema" a boolean;
// "completions" ([ParseCompletions], naming declared arguments) a funcmcp
// key. An mcpPromptArgument binding needs a non-blank "argumentName".
//
// Every problem is returned, joined; each is a *LoadError.
func LoadPrompt(fn *metadata.Function, b *metadata.Binding, file string) (*Prompt, error) {
	p := &Prompt{File: file}
	if fn != nil {
		p.Function = fn.Name
	}
	base := LoadError{Function: p.Function, Kind: KindPrompt, File: file}
	if b == nil {
		return nil, loadErrs(base, []error{errors.New("the mcpPromptTrigger binding is null")})
	}
	p.Binding = b.Name()
	var errs []error
	if !b.IsType(metadata.TypeMcpPromptTrigger) {
		errs = append(errs, fmt.Errorf("binding type is %q, not %q", b.Type(), metadata.TypeMcpPromptTrigger))
	}
	var err error
	if p.Name, err = requiredString(b, metadata.KeyPromptName); err != nil {
		errs = append(errs, err)
	}
	base.Name = p.Name
	for _, f := range []struct {
		key string
		dst *string
	}{{metadata.KeyTitle, &p.Title}, {metadata.KeyDescription, &p.Description}} {
		if s, _, err := optionalString(b, f.key); err != nil {
			errs = append(errs, fmt.Errorf("%s %w", f.key, err))
		} else {
			*f.dst = s
		}
	}
	if text, err := jsonStringKey(b, metadata.KeyPromptArguments, "a JSON array"); err != nil {
		errs = append(errs, err)
	} else if p.Arguments, err = ParsePromptArguments(text); err != nil {
		errs = append(errs, err)
	}
	if text, err := jsonStringKey(b, metadata.KeyIcons, "a JSON array"); err != nil {
		errs = append(errs, err)
	} else if p.Icons, err = ParseIcons(text); err != nil {
		errs = append(errs, err)
	}
	if p.RequiredScopes, err = parseRequiredScopes(b); err != nil {
		errs = append(errs, err)
	}
	if p.Metadata, err = parseMetadata(b); err != nil {
		errs = append(errs, err)
	}
	if p.UseResultSchema, err = optionalBool(b, metadata.KeyUseResultSchema); err != nil {
		errs = append(errs, fmt.Errorf("%s %w", metadata.KeyUseResultSchema, err))
	}
	if text, err := jsonStringKey(b, metadata.KeyCompletions, "a JSON object"); err != nil {
		errs = append(errs, err)
	} else if text != "" {
		names := make([]string, len(p.Arguments))
		for i, a := range p.Arguments {
			names[i] = a.Name
		}
		if p.Completions, err = ParseCompletions(text, names, "an argument of the prompt"); err != nil {
			errs = append(errs, err)
		}
	}
	if fn != nil {
		for i, ab := range fn.Bindings {
			if ab == nil || !ab.IsType(metadata.TypeMcpPromptArgument) {
				continue
			}
			name, err := requiredString(ab, metadata.KeyArgumentName)
			if err != nil {
				errs = append(errs, fmt.Errorf("binding %d (%s): %w", i, metadata.TypeMcpPromptArgument, err))
				continue
			}
			required, err := optionalBool(ab, metadata.KeyIsRequired)
			if err != nil {
				errs = append(errs, fmt.Errorf("binding %d (%s): %s %w", i, metadata.TypeMcpPromptArgument, metadata.KeyIsRequired, err))
				continue
			}
			p.ArgumentBindings = append(p.ArgumentBindings, PromptArgumentBinding{Name: ab.Name(), Argument: name, Required: required})
		}
	}
	if err := loadErrs(base, errs); err != nil {
		return nil, err
	}
	return p, nil
}

// ParsePromptArguments reads the promptArguments text: a JSON array of
// prompt arguments, member names matched case-insensitively; every name is
// a string that is not blank and not repeated. "" means no arguments (nil).
func ParsePromptArguments(text string) ([]metadata.PromptArgument, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &items); err != nil {
		return nil, fmt.Errorf("%s must be a string holding a JSON array of prompt arguments: %w", metadata.KeyPromptArguments, err)
	}
	args := make([]metadata.PromptArgument, 0, len(items))
	seen := map[string]bool{}
	for i, item := range items {
		var a metadata.PromptArgument
		for _, f := range []struct {
			key string
			dst any
		}{{"name", &a.Name}, {"title", &a.Title}, {"description", &a.Description}, {"required", &a.Required}} {
			if raw, ok := metadata.LookupFoldMap(item, f.key); ok && !jsonx.IsNull(raw) {
				if err := json.Unmarshal(raw, f.dst); err != nil {
					return nil, fmt.Errorf("%s[%d].%s has the wrong type", metadata.KeyPromptArguments, i, f.key)
				}
			}
		}
		switch {
		case strings.TrimSpace(a.Name) == "":
			return nil, fmt.Errorf("%s[%d]: the name is missing or blank", metadata.KeyPromptArguments, i)
		case seen[a.Name]:
			return nil, fmt.Errorf("%s: argument %q is declared twice", metadata.KeyPromptArguments, a.Name)
		}
		seen[a.Name] = true
		args = append(args, a)
	}
	return args, nil
}

// Required returns the names of the required arguments, in order.
func (p *Prompt) Required() []string {
	var names []string
	for _, a := range p.Arguments {
		if a.Required {
			names = append(names, a.Name)
		}
	}
	return names
}

// MissingArguments lists, in order, the required arguments that are absent
// or JSON null in args (names matched exactly, as the extension's
// McpPromptListener does); nil when none is missing.
func (p *Prompt) MissingArguments(args map[string]json.RawMessage) []string {
	var missing []string
	for _, name := range p.Required() {
		raw, ok := args[name]
		if !ok || len(raw) == 0 || jsonx.IsNull(raw) {
			missing = append(missing, name)
		}
	}
	return missing
}

// MissingPromptArgumentsMessage is the message of the JSON-RPC -32602 error
// the extension answers a prompts/get without every required argument with.
func MissingPromptArgumentsMessage(missing []string) string {
	return "One or more required prompt arguments are missing values. Please provide: " + strings.Join(missing, ", ")
}

// Completion returns the completion source of an argument.
func (p *Prompt) Completion(argument string) (metadata.CompletionSource, bool) {
	return completionOf(p.Completions, argument)
}

// ListEntry returns the prompt as prompts/list lists it: {"name","title"?,
// "description"?,"arguments"?,"icons"?,"_meta"?}, arguments only when
// promptArguments is given.
func (p *Prompt) ListEntry() json.RawMessage {
	obj := &metadata.Binding{} // an ordered JSON object
	obj.SetString("name", p.Name)
	setStr(obj, "title", p.Title)
	setStr(obj, "description", p.Description)
	if p.Arguments != nil {
		data, _ := metadata.Marshal(p.Arguments)
		_ = obj.SetRaw("arguments", data)
	}
	if len(p.Icons) > 0 {
		data, _ := metadata.Marshal(p.Icons)
		_ = obj.SetRaw("icons", data)
	}
	if len(p.Metadata) > 0 {
		_ = obj.SetRaw("_meta", p.Metadata)
	}
	data, _ := obj.MarshalJSON()
	return data
}

// DecodeReturnValue turns a worker's ReturnValue into a GetPromptResult,
// as the extension's binders do.
//
// With UseResultSchema (PromptReturnValueBinder) the value is the envelope
// {"content":"<json>","type":"<kind>"} as a JSON string (the object itself
// is accepted too; member names matched case-insensitively): type
// get_prompt_result gives the GetPromptResult content holds,
// prompt_messages a result with the messages of the array content holds
// (types compared case-insensitively). Absent or null gives no messages. A
// missing type or content, another type, and content that does not decode
// are errors.
//
// Without it (SimplePromptReturnValueBinder) the value is the text of one
// user message: a string's text, any other value's compact JSON; null gives
// no messages.
//
// Every message must have the role user or assistant and one valid content
// block ([CheckContentBlock]). Errors are *ReturnValueError.
func (p *Prompt) DecodeReturnValue(raw json.RawMessage) (*metadata.GetPromptResult, error) {
	v := bytes.TrimSpace(raw)
	if len(v) == 0 || bytes.Equal(v, []byte("null")) {
		return &metadata.GetPromptResult{Messages: []metadata.PromptMessage{}}, nil
	}
	var text string
	isString := v[0] == '"'
	if isString {
		if err := json.Unmarshal(v, &text); err != nil {
			return nil, promptErr("the return value is not valid JSON: %v", err)
		}
	}
	if !p.UseResultSchema {
		if !isString {
			var buf bytes.Buffer
			if err := json.Compact(&buf, v); err != nil {
				return nil, promptErr("the return value is not valid JSON: %v", err)
			}
			text = buf.String()
		}
		return &metadata.GetPromptResult{Messages: []metadata.PromptMessage{{Role: metadata.RoleUser, Content: metadata.TextContent(text)}}}, nil
	}
	envText := v
	if isString {
		envText = bytes.TrimSpace([]byte(text))
	}
	var env map[string]json.RawMessage
	if err := json.Unmarshal(envText, &env); err != nil || env == nil {
		return nil, promptErr("the return value is not a prompt result envelope {\"content\",\"type\"}")
	}
	var typ, content string
	if rawType, ok := metadata.LookupFoldMap(env, "type"); !ok || json.Unmarshal(rawType, &typ) != nil || jsonx.IsNull(rawType) {
		return nil, promptErr("the envelope has no string type")
	}
	rawContent, ok := metadata.LookupFoldMap(env, "content")
	if !ok || jsonx.IsNull(rawContent) {
		return nil, promptErr("the envelope's content is null")
	}
	if err := json.Unmarshal(rawContent, &content); err != nil {
		return nil, promptErr("the envelope's content must be a string holding JSON")
	}
	var res metadata.GetPromptResult
	switch {
	case strings.EqualFold(typ, metadata.PromptResultTypeGetPromptResult):
		if err := decodeGetPromptResult([]byte(content), &res); err != nil {
			return nil, promptErr("content of type %q: %v", typ, err)
		}
	case strings.EqualFold(typ, metadata.PromptResultTypeMessages):
		if err := json.Unmarshal([]byte(content), &res.Messages); err != nil || res.Messages == nil {
			return nil, promptErr("content of type %q must be a JSON array of prompt messages", typ)
		}
	default:
		return nil, promptErr("unknown prompt result type %q", typ)
	}
	if res.Messages == nil {
		res.Messages = []metadata.PromptMessage{}
	}
	for i := range res.Messages {
		if err := checkPromptMessage(&res.Messages[i]); err != nil {
			return nil, promptErr("message %d: %v", i, err)
		}
	}
	return &res, nil
}

func promptErr(format string, args ...any) error {
	return &ReturnValueError{Kind: KindPrompt, Reason: fmt.Sprintf(format, args...)}
}

// decodeGetPromptResult decodes a whole GetPromptResult: description a
// string, messages an array, _meta an object.
func decodeGetPromptResult(data []byte, res *metadata.GetPromptResult) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		return errors.New("not a JSON object")
	}
	if raw, ok := m["description"]; ok && !jsonx.IsNull(raw) {
		if json.Unmarshal(raw, &res.Description) != nil {
			return errors.New("description must be a string")
		}
	}
	if raw, ok := m["messages"]; ok && !jsonx.IsNull(raw) {
		if json.Unmarshal(raw, &res.Messages) != nil {
			return errors.New("messages must be an array of prompt messages")
		}
	}
	if raw, ok := m["_meta"]; ok && !jsonx.IsNull(raw) {
		var buf bytes.Buffer
		if json.Compact(&buf, raw) != nil || buf.Bytes()[0] != '{' {
			return errors.New("_meta must be a JSON object")
		}
		res.Meta = buf.Bytes()
	}
	return nil
}

// CheckPromptMessage checks one prompt message: the role user or
// assistant, and one valid content block.
func CheckPromptMessage(m metadata.PromptMessage) error { return checkPromptMessage(&m) }

// checkPromptMessage checks m and compacts its content block.
func checkPromptMessage(m *metadata.PromptMessage) error {
	if m.Role != metadata.RoleUser && m.Role != metadata.RoleAssistant {
		return fmt.Errorf("role %q is not user or assistant", m.Role)
	}
	if len(m.Content) == 0 || jsonx.IsNull(m.Content) {
		return errors.New("the content is missing")
	}
	if err := CheckContentBlock(m.Content); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, m.Content); err == nil {
		m.Content = buf.Bytes()
	}
	return nil
}

// DecodeCompletionReturnValue reads a worker's reply to a completion
// request: a ReturnValue string holding {"completion":{"values":[strings],
// "total"?,"hasMore"?}} (the object itself is accepted too). More than
// metadata.MaxCompletionValues values is an error.
func DecodeCompletionReturnValue(raw json.RawMessage) (*metadata.CompleteResult, error) {
	v := bytes.TrimSpace(raw)
	if len(v) > 0 && v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, fmt.Errorf("decoding the completion result: %w", err)
		}
		v = bytes.TrimSpace([]byte(s))
	}
	var res struct {
		Completion *struct {
			Values  []string `json:"values"`
			Total   *int     `json:"total"`
			HasMore *bool    `json:"hasMore"`
		} `json:"completion"`
	}
	if err := json.Unmarshal(v, &res); err != nil || res.Completion == nil {
		return nil, errors.New(`decoding the completion result: want {"completion":{"values":[strings]}}`)
	}
	c := res.Completion
	if len(c.Values) > metadata.MaxCompletionValues {
		return nil, fmt.Errorf("decoding the completion result: %d values, more than %d", len(c.Values), metadata.MaxCompletionValues)
	}
	out := &metadata.CompleteResult{Completion: metadata.CompletionValues{Values: c.Values, Total: c.Total}}
	if c.HasMore != nil {
		out.Completion.HasMore = *c.HasMore
	}
	return out, nil
}
