package binding

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// Resource is everything needed to serve one resource or resource
// template, read once at load from its mcpResourceTrigger binding.
type Resource struct {
	Function string // the function (folder) name
	File     string // the function.json path, "" when unknown
	// Binding is the binding "name": the Data key of the invocation.
	Binding string

	// URI is the resource's URI, or its URI template.
	URI string
	// Name is the resourceName.
	Name        string
	Title       string
	Description string
	MimeType    string
	// Size is the size in bytes; nil when not given.
	Size *int64
	// Metadata is the compact metadata object (the _meta); nil for none.
	Metadata json.RawMessage
	// Icons (a funcmcp key on resources).
	Icons []metadata.Icon
	// Completions of template variables (a funcmcp key).
	Completions []metadata.CompletionSource
	// Template is the parsed URI template; nil for a static resource.
	Template *URITemplate
	// RequiredScopes are the OAuth scopes a caller's token must grant to
	// read it (a funcmcp key); nil when none.
	RequiredScopes []string
}

// Kind returns KindTemplate or KindResource.
func (r *Resource) Kind() string {
	if r.Template != nil {
		return KindTemplate
	}
	return KindResource
}

// LoadResource reads the mcpResourceTrigger binding b of fn and decides
// whether it can be served. It is the one rule of both sides: the worker
// SDK runs it on what it emits, the host at load. Keys are matched
// case-insensitively. Rules: "uri" and "resourceName" are required strings
// (not blank), the URI passes [ValidateResourceURI] (a template is compiled
// with [ParseURITemplate]); "title", "description" and "mimeType" are
// optional strings, mimeType a MIME type ([CheckMimeType]); "size" is
// absent, null or a whole number of at least 0; "metadata" a string holding
// a JSON object (or the object); "icons" ([ParseIcons]) and "completions"
// ([ParseCompletions]; templates only, naming template variables) are
// funcmcp keys.
//
// Every problem is returned, joined; each is a *LoadError.
func LoadResource(fn *metadata.Function, b *metadata.Binding, file string) (*Resource, error) {
	r := &Resource{File: file}
	if fn != nil {
		r.Function = fn.Name
	}
	base := LoadError{Function: r.Function, Kind: KindResource, File: file}
	if b == nil {
		return nil, loadErrs(base, []error{errors.New("the mcpResourceTrigger binding is null")})
	}
	r.Binding = b.Name()
	var errs []error
	if !b.IsType(metadata.TypeMcpResourceTrigger) {
		errs = append(errs, fmt.Errorf("binding type is %q, not %q", b.Type(), metadata.TypeMcpResourceTrigger))
	}
	uri, err := requiredString(b, metadata.KeyURI)
	if err != nil {
		errs = append(errs, err)
	} else {
		r.URI, base.Name = uri, uri
		if IsURITemplate(uri) {
			base.Kind = KindTemplate
			r.Template, err = ParseURITemplate(uri)
		} else {
			err = ValidateResourceURI(uri)
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	if r.Name, err = requiredString(b, metadata.KeyResourceName); err != nil {
		errs = append(errs, err)
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{metadata.KeyTitle, &r.Title}, {metadata.KeyDescription, &r.Description}, {metadata.KeyMimeType, &r.MimeType}} {
		if s, _, err := optionalString(b, f.key); err != nil {
			errs = append(errs, fmt.Errorf("%s %w", f.key, err))
		} else {
			*f.dst = s
		}
	}
	if r.MimeType != "" {
		if err := CheckMimeType(r.MimeType); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", metadata.KeyMimeType, err))
		}
	}
	if r.Size, err = parseSize(b); err != nil {
		errs = append(errs, err)
	}
	if r.Metadata, err = parseMetadata(b); err != nil {
		errs = append(errs, err)
	}
	if text, err := jsonStringKey(b, metadata.KeyIcons, "a JSON array"); err != nil {
		errs = append(errs, err)
	} else if r.Icons, err = ParseIcons(text); err != nil {
		errs = append(errs, err)
	}
	if r.RequiredScopes, err = parseRequiredScopes(b); err != nil {
		errs = append(errs, err)
	}
	if text, err := jsonStringKey(b, metadata.KeyCompletions, "a JSON object"); err != nil {
		errs = append(errs, err)
	} else if text != "" {
		switch {
		case r.Template != nil:
			if r.Completions, err = ParseCompletions(text, r.Template.Variables(), "a variable of the template"); err != nil {
				errs = append(errs, err)
			}
		case r.URI != "" && !IsURITemplate(r.URI):
			errs = append(errs, fmt.Errorf("%s: a static resource has no variables to complete", metadata.KeyCompletions))
		} // a template that failed to parse: that error says why
	}
	if err := loadErrs(base, errs); err != nil {
		return nil, err
	}
	return r, nil
}

// parseSize reads size: absent or null, or a whole number of at least 0
// that fits 64 bits.
func parseSize(b *metadata.Binding) (*int64, error) {
	raw, ok := b.Lookup(metadata.KeySize)
	if !ok || jsonx.IsNull(raw) {
		return nil, nil
	}
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		return nil, fmt.Errorf("%s must be a number", metadata.KeySize)
	}
	if f < 0 || f != math.Trunc(f) || f > math.MaxInt64 {
		return nil, fmt.Errorf("%s must be a whole number of bytes, at least 0 (got %s)", metadata.KeySize, raw)
	}
	var n int64
	if err := json.Unmarshal(raw, &n); err != nil {
		return nil, fmt.Errorf("%s must be a whole number of bytes (got %s)", metadata.KeySize, raw)
	}
	return &n, nil
}

// Match reports whether the resource serves a requested URI: a static
// resource its URI compared case-insensitively, a template any URI its
// matcher accepts, with the variables' values.
func (r *Resource) Match(uri string) (map[string]string, bool) {
	if r.Template != nil {
		return r.Template.Match(uri)
	}
	return nil, strings.EqualFold(r.URI, uri)
}

// ListEntry returns the resource as resources/list lists it
// ({"name","title"?,"uri","description"?,"mimeType"?,"size"?,"icons"?,
// "_meta"?}), or the template as resources/templates/list lists it (with
// "uriTemplate" for "uri", and no size).
func (r *Resource) ListEntry() json.RawMessage {
	obj := &metadata.Binding{} // an ordered JSON object
	obj.SetString("name", r.Name)
	setStr(obj, "title", r.Title)
	if r.Template != nil {
		obj.SetString("uriTemplate", r.URI)
	} else {
		obj.SetString("uri", r.URI)
	}
	setStr(obj, "description", r.Description)
	setStr(obj, "mimeType", r.MimeType)
	if r.Size != nil && r.Template == nil {
		_ = obj.SetRaw("size", []byte(fmt.Sprint(*r.Size)))
	}
	if len(r.Icons) > 0 {
		data, _ := metadata.Marshal(r.Icons)
		_ = obj.SetRaw("icons", data)
	}
	if len(r.Metadata) > 0 {
		_ = obj.SetRaw("_meta", r.Metadata)
	}
	data, _ := obj.MarshalJSON()
	return data
}

func setStr(obj *metadata.Binding, key, value string) {
	if value != "" {
		obj.SetString(key, value)
	}
}

// Completion returns the completion source of a template variable.
func (r *Resource) Completion(variable string) (metadata.CompletionSource, bool) {
	return completionOf(r.Completions, variable)
}

// ReturnValueError is a worker return value that cannot be turned into a
// resources/read or prompts/get result.
type ReturnValueError struct {
	Kind   string // KindResource or KindPrompt
	Reason string
}

func (e *ReturnValueError) Error() string {
	return fmt.Sprintf("decoding the %s result: %s", e.Kind, e.Reason)
}

// DecodeReturnValue turns a worker's ReturnValue for a read of requested
// into a ReadResourceResult, as the extension's ResourceReturnValueBinder
// does:
//   - absent or null: no contents;
//   - a string holding the envelope {"content":"<ResourceContents JSON>"}
//     ("content" matched case-insensitively): that one contents item, its
//     keys matched exactly (uri, mimeType, text or blob, _meta), with an
//     empty uri filled in by requested and an empty mimeType by the
//     resource's;
//   - any other string (not JSON, no "content" string member, or content
//     that is not a JSON object): the text of one text contents item with
//     the requested URI and the resource's mimeType.
//
// Unlike the extension, which takes strings and bytes only, any other JSON
// value is read as the string of its compact JSON. Contents whose content
// is JSON null or has neither text nor blob, a text or blob that is not a
// string, a blob that is not base64 and a _meta that is not an object are
// errors (*ReturnValueError).
func (r *Resource) DecodeReturnValue(raw json.RawMessage, requested string) (*metadata.ReadResourceResult, error) {
	v := bytes.TrimSpace(raw)
	if len(v) == 0 || bytes.Equal(v, []byte("null")) {
		return &metadata.ReadResourceResult{Contents: []metadata.ResourceContents{}}, nil
	}
	var s string
	if v[0] == '"' {
		if err := json.Unmarshal(v, &s); err != nil {
			return nil, r.valueErr("the return value is not valid JSON: %v", err)
		}
	} else {
		var buf bytes.Buffer
		if err := json.Compact(&buf, v); err != nil {
			return nil, r.valueErr("the return value is not valid JSON: %v", err)
		}
		s = buf.String()
	}
	c, isEnvelope, err := r.envelopeContents(s)
	if err != nil {
		return nil, err
	}
	if !isEnvelope {
		text := s
		c = metadata.ResourceContents{URI: requested, MimeType: r.MimeType, Text: &text}
	}
	if c.URI == "" {
		c.URI = requested
	}
	if c.MimeType == "" {
		c.MimeType = r.MimeType
	}
	return &metadata.ReadResourceResult{Contents: []metadata.ResourceContents{c}}, nil
}

func (r *Resource) valueErr(format string, args ...any) error {
	return &ReturnValueError{Kind: KindResource, Reason: fmt.Sprintf(format, args...)}
}

// envelopeContents reads s as the resource envelope; isEnvelope is false
// when the extension would take s as plain text.
func (r *Resource) envelopeContents(s string) (c metadata.ResourceContents, isEnvelope bool, err error) {
	var outer map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &outer) != nil || outer == nil {
		return c, false, nil
	}
	rawContent, ok := metadata.LookupFoldMap(outer, "content")
	if !ok {
		return c, false, nil
	}
	if jsonx.IsNull(rawContent) {
		return c, false, r.valueErr("the envelope's content is null")
	}
	var content string
	if json.Unmarshal(rawContent, &content) != nil {
		return c, false, nil
	}
	var m map[string]json.RawMessage
	trimmed := bytes.TrimSpace([]byte(content))
	if jsonx.IsNull(trimmed) {
		return c, false, r.valueErr("the envelope's content is the JSON null")
	}
	if json.Unmarshal(trimmed, &m) != nil || m == nil {
		return c, false, nil
	}
	str := func(key string) (*string, error) {
		raw, ok := m[key]
		if !ok || jsonx.IsNull(raw) {
			return nil, nil
		}
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, r.valueErr("the contents' %s must be a string", key)
		}
		return &v, nil
	}
	var uri, mimeType *string
	if uri, err = str("uri"); err != nil {
		return c, true, err
	}
	if mimeType, err = str("mimeType"); err != nil {
		return c, true, err
	}
	if c.Text, err = str("text"); err != nil {
		return c, true, err
	}
	if c.Blob, err = str("blob"); err != nil {
		return c, true, err
	}
	if uri != nil {
		c.URI = *uri
	}
	if mimeType != nil {
		c.MimeType = *mimeType
	}
	switch {
	case c.Blob != nil:
		if _, err := base64.StdEncoding.DecodeString(*c.Blob); err != nil {
			return c, true, r.valueErr("the contents' blob is not base64: %v", err)
		}
		c.Text = nil
	case c.Text == nil:
		return c, true, r.valueErr(`the contents have neither "text" nor "blob"`)
	}
	if meta, ok := m["_meta"]; ok && !jsonx.IsNull(meta) {
		var buf bytes.Buffer
		if json.Compact(&buf, meta) != nil || buf.Bytes()[0] != '{' {
			return c, true, r.valueErr("the contents' _meta must be a JSON object")
		}
		c.Meta = buf.Bytes()
	}
	return c, true, nil
}
