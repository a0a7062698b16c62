package binding

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/url"
	"strings"

	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// Kinds of MCP function a [LoadError] names.
const (
	KindResource = "resource"
	KindTemplate = "resource template"
	KindPrompt   = "prompt"
)

// LoadError is a problem with one resource, resource template or prompt
// function: it names the function, the kind, the resource URI or prompt
// name, and the function.json file, then gives the reason. Reach it with
// errors.As; the reason stays reachable through Unwrap.
type LoadError struct {
	Function string // the function (folder) name
	Kind     string // KindResource, KindTemplate or KindPrompt
	Name     string // the uri or promptName, "" when the binding has none
	File     string // the function.json path, "" when unknown
	Err      error  // the reason
}

func (e *LoadError) Error() string {
	what := ""
	if e.Name != "" {
		what = e.Kind + " " + jsonx.QuoteSafe(e.Name)
	}
	return functionError(e.Function, what, e.File, e.Err)
}

func (e *LoadError) Unwrap() error { return e.Err }

// loadErrs wraps each problem in a *LoadError and joins them.
func loadErrs(base LoadError, errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	wrapped := make([]error, len(errs))
	for i, err := range errs {
		e := base
		e.Err = err
		wrapped[i] = &e
	}
	if len(wrapped) == 1 {
		return wrapped[0]
	}
	return errors.Join(wrapped...)
}

// requiredString reads a key that must be a non-blank string.
func requiredString(b *metadata.Binding, key string) (string, error) {
	switch s, present, err := optionalString(b, key); {
	case !present:
		return "", fmt.Errorf("%s is missing", key)
	case err != nil:
		return "", fmt.Errorf("%s %w", key, err)
	case strings.TrimSpace(s) == "":
		return "", fmt.Errorf("%s is empty", key)
	default:
		return s, nil
	}
}

// jsonStringKey returns the JSON a key holds as a string ("" when absent,
// null or blank).
func jsonStringKey(b *metadata.Binding, key, what string) (string, error) {
	s, _, err := optionalString(b, key)
	if err != nil {
		return "", fmt.Errorf("%s must be a string holding %s", key, what)
	}
	return strings.TrimSpace(s), nil
}

// CheckMimeType checks a MIME type: a type/subtype with optional
// parameters, as mime.ParseMediaType reads it.
func CheckMimeType(s string) error {
	mt, _, err := mime.ParseMediaType(s)
	if err != nil || !strings.Contains(mt, "/") || strings.HasPrefix(mt, "/") || strings.HasSuffix(mt, "/") {
		return fmt.Errorf("%q is not a MIME type (type/subtype, such as text/plain)", s)
	}
	return nil
}

// ParseIcons reads the icons key: a string holding a JSON array of icons
// (keys matched case-insensitively, as the extension decodes them), each
// checked with [CheckIcon]. "" means none.
func ParseIcons(text string) ([]metadata.Icon, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var items []map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &items); err != nil {
		return nil, fmt.Errorf("%s must be a string holding a JSON array of icons: %w", metadata.KeyIcons, err)
	}
	icons := make([]metadata.Icon, 0, len(items))
	for i, item := range items {
		var icon metadata.Icon
		for _, f := range []struct {
			key string
			dst any
		}{{"src", &icon.Src}, {"mimeType", &icon.MimeType}, {"sizes", &icon.Sizes}, {"theme", &icon.Theme}} {
			if raw, ok := metadata.LookupFoldMap(item, f.key); ok && !jsonx.IsNull(raw) {
				if err := json.Unmarshal(raw, f.dst); err != nil {
					return nil, fmt.Errorf("%s[%d].%s has the wrong type", metadata.KeyIcons, i, f.key)
				}
			}
		}
		if err := CheckIcon(icon); err != nil {
			return nil, fmt.Errorf("%s[%d]: %w", metadata.KeyIcons, i, err)
		}
		icons = append(icons, icon)
	}
	return icons, nil
}

// CheckIcon checks one icon: src is an https:, http: or data: URI (the
// extension requires src), mimeType a MIME type when given, sizes not
// blank, theme "light", "dark" or "".
func CheckIcon(icon metadata.Icon) error {
	if strings.TrimSpace(icon.Src) == "" {
		return errors.New("src is missing")
	}
	u, err := url.Parse(icon.Src)
	if err != nil {
		return fmt.Errorf("src %q is not a URI: %w", icon.Src, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "https", "http", "data":
	default:
		return fmt.Errorf("src %q must be an https:, http: or data: URI", icon.Src)
	}
	if icon.MimeType != "" {
		if err := CheckMimeType(icon.MimeType); err != nil {
			return fmt.Errorf("mimeType: %w", err)
		}
	}
	for _, s := range icon.Sizes {
		if strings.TrimSpace(s) == "" {
			return errors.New("a size is empty")
		}
	}
	switch icon.Theme {
	case "", metadata.IconThemeLight, metadata.IconThemeDark:
	default:
		return fmt.Errorf("theme %q is not light or dark", icon.Theme)
	}
	return nil
}

// ParseCompletions reads the completions key: a string holding a JSON
// object whose members map a name to {"values":[strings]} or
// {"dynamic":true} (see metadata.KeyCompletions). Each name must be one of
// names (the prompt's arguments or the template's variables). "" means
// none.
func ParseCompletions(text string, names []string, what string) ([]metadata.CompletionSource, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var obj metadata.Binding // an ordered JSON object
	if err := obj.UnmarshalJSON([]byte(text)); err != nil {
		return nil, fmt.Errorf("%s must be a string holding a JSON object: %w", metadata.KeyCompletions, err)
	}
	var out []metadata.CompletionSource
	for _, f := range obj.Fields() {
		known := false
		for _, n := range names {
			known = known || n == f.Key
		}
		if !known {
			return nil, fmt.Errorf("%s: %q is not %s", metadata.KeyCompletions, f.Key, what)
		}
		var src struct {
			Values  *[]string `json:"values"`
			Dynamic bool      `json:"dynamic"`
		}
		if err := json.Unmarshal(f.Value, &src); err != nil || !bytes.HasPrefix(f.Value, []byte("{")) {
			return nil, fmt.Errorf(`%s: %q must be {"values":[strings]} or {"dynamic":true}`, metadata.KeyCompletions, f.Key)
		}
		switch {
		case src.Dynamic && src.Values != nil:
			return nil, fmt.Errorf(`%s: %q has both values and dynamic`, metadata.KeyCompletions, f.Key)
		case !src.Dynamic && src.Values == nil:
			return nil, fmt.Errorf(`%s: %q must be {"values":[strings]} or {"dynamic":true}`, metadata.KeyCompletions, f.Key)
		case src.Dynamic:
			out = append(out, metadata.CompletionSource{Name: f.Key, Dynamic: true})
		default:
			out = append(out, metadata.CompletionSource{Name: f.Key, Values: *src.Values})
		}
	}
	return out, nil
}

// ParseToolAnnotations reads a tool's annotations key: a string holding a
// JSON object with title (a string) and the readOnlyHint, destructiveHint,
// idempotentHint and openWorldHint booleans; other members are refused. It
// returns the compact object, nil when there is none.
func ParseToolAnnotations(text string) (json.RawMessage, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &m); err != nil || m == nil {
		return nil, fmt.Errorf("%s must be a string holding a JSON object", metadata.KeyAnnotations)
	}
	for k, v := range m {
		var err error
		switch k {
		case "title":
			var s string
			err = json.Unmarshal(v, &s)
		case "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint":
			var b bool
			err = json.Unmarshal(v, &b)
		default:
			return nil, fmt.Errorf("%s: %q is not a tool annotation", metadata.KeyAnnotations, k)
		}
		if err != nil || jsonx.IsNull(v) {
			return nil, fmt.Errorf("%s: %q has the wrong type", metadata.KeyAnnotations, k)
		}
	}
	if len(m) == 0 {
		return nil, nil
	}
	var buf bytes.Buffer
	_ = json.Compact(&buf, []byte(strings.TrimSpace(text)))
	return buf.Bytes(), nil
}

// CompleteValues answers a completion from a fixed list: the values that
// start with prefix, compared case-insensitively, in their order, at most
// metadata.MaxCompletionValues, with the total number of matches and
// whether there are more than it returns. It is the one rule for fixed
// completion lists, applied by the worker and the host alike.
func CompleteValues(values []string, prefix string) *metadata.CompleteResult {
	lower := strings.ToLower(prefix)
	matches := []string{}
	for _, v := range values {
		if strings.HasPrefix(strings.ToLower(v), lower) {
			matches = append(matches, v)
		}
	}
	return completeResult(matches)
}

// CompleteResultOf caps values computed by a worker's completion function
// as a completion result: at most metadata.MaxCompletionValues, with their
// total and whether there are more.
func CompleteResultOf(values []string) *metadata.CompleteResult {
	return completeResult(append([]string{}, values...))
}

func completeResult(values []string) *metadata.CompleteResult {
	total := len(values)
	res := &metadata.CompleteResult{Completion: metadata.CompletionValues{Values: values, Total: &total}}
	if total > metadata.MaxCompletionValues {
		res.Completion.Values = values[:metadata.MaxCompletionValues]
		res.Completion.HasMore = true
	}
	return res
}

// completionOf finds the completion source of name.
func completionOf(sources []metadata.CompletionSource, name string) (metadata.CompletionSource, bool) {
	for _, s := range sources {
		if s.Name == name {
			return s, true
		}
	}
	return metadata.CompletionSource{}, false
}

// parseExtras reads a tool trigger's funcmcp annotations and icons.
func (t *Trigger) parseExtras(b *metadata.Binding) []error {
	var errs []error
	if text, err := jsonStringKey(b, metadata.KeyAnnotations, "a JSON object"); err != nil {
		errs = append(errs, err)
	} else if t.Annotations, err = ParseToolAnnotations(text); err != nil {
		errs = append(errs, err)
	}
	if text, err := jsonStringKey(b, metadata.KeyIcons, "a JSON array"); err != nil {
		errs = append(errs, err)
	} else if t.Icons, err = ParseIcons(text); err != nil {
		errs = append(errs, err)
	}
	if text, err := jsonStringKey(b, metadata.KeyTask, "a JSON object"); err != nil {
		errs = append(errs, err)
	} else if text != "" {
		var ts metadata.TaskSupport
		dec := json.NewDecoder(strings.NewReader(text))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&ts); err != nil {
			errs = append(errs, fmt.Errorf("%s must be a string holding {\"support\",\"ttlMs\"?,\"pollIntervalMs\"?}: %v", metadata.KeyTask, err))
		} else if err := ts.Check(); err != nil {
			errs = append(errs, err)
		} else {
			t.Task = &ts
		}
	}
	var err error
	if t.RequiredScopes, err = parseRequiredScopes(b); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// parseRequiredScopes reads the requiredScopes key of a tool, resource or
// prompt trigger: a string holding a JSON array of scopes
// ([metadata.CheckScopes]); nil when absent or empty.
func parseRequiredScopes(b *metadata.Binding) ([]string, error) {
	text, err := jsonStringKey(b, metadata.KeyRequiredScopes, "a JSON array")
	if err != nil || text == "" {
		return nil, err
	}
	var rs []string
	if err := json.Unmarshal([]byte(text), &rs); err != nil {
		return nil, fmt.Errorf("%s must be a string holding a JSON array of strings: %v", metadata.KeyRequiredScopes, err)
	}
	if err := metadata.CheckScopes(rs); err != nil {
		return nil, err
	}
	if len(rs) == 0 {
		return nil, nil
	}
	return rs, nil
}
