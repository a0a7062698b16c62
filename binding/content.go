package binding

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"slices"
	"strings"

	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// CheckContentBlock checks one MCP content block: an object whose "type" is
// a known block kind (text, image, audio, resource_link, resource), with
// that kind's required fields. It is the one content-block check of both
// sides: the worker applies it before replying, the host when decoding.
func CheckContentBlock(block json.RawMessage) error {
	if blockCertainlyValid(block) {
		return nil
	}
	return checkContentBlockFully(block)
}

// checkContentBlockFully is CheckContentBlock on the decoded block, with
// its error messages.
func checkContentBlockFully(block json.RawMessage) error {
	b := bytes.TrimSpace(block)
	if len(b) == 0 || b[0] != '{' {
		return fmt.Errorf("a content block must be a JSON object, not %s", abbreviate(b))
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("not valid JSON: %w", err)
	}
	var typ string
	if raw, ok := m["type"]; !ok || json.Unmarshal(raw, &typ) != nil || jsonx.IsNull(raw) {
		return fmt.Errorf(`a content block needs a string "type"`)
	}
	var need []string
	switch typ {
	case metadata.ResultTypeText:
		need = []string{"text"}
	case metadata.ResultTypeImage, metadata.ResultTypeAudio:
		need = []string{"data", "mimeType"}
	case metadata.ResultTypeResourceLink:
		need = []string{"uri", "name"}
	case metadata.ResultTypeResource:
		raw, ok := m["resource"]
		if !ok || len(raw) == 0 || raw[0] != '{' {
			return fmt.Errorf(`the "resource" block needs a "resource" object`)
		}
		var res map[string]json.RawMessage
		if err := json.Unmarshal(raw, &res); err != nil {
			return fmt.Errorf(`the "resource" block needs a "resource" object`)
		}
		if k, missing := missingString(res, "uri"); missing {
			return fmt.Errorf(`the "resource" block's "resource" needs a string %q`, k)
		}
		_, hasText := res["text"]
		_, hasBlob := res["blob"]
		if !hasText && !hasBlob {
			return fmt.Errorf(`the "resource" block's "resource" needs "text" or "blob"`)
		}
		return nil
	default:
		return fmt.Errorf("unknown content block type %q", typ)
	}
	if k, missing := missingString(m, need...); missing {
		return fmt.Errorf("the %q block needs a string %q", typ, k)
	}
	return nil
}

// missingString returns the first of keys whose value in m is not a JSON
// string. The values come from decoding a whole object, so they are valid
// JSON: a string is told by its first byte, without decoding it.
func missingString(m map[string]json.RawMessage, keys ...string) (string, bool) {
	for _, k := range keys {
		if raw := m[k]; len(raw) == 0 || raw[0] != '"' {
			return k, true
		}
	}
	return "", false
}

func abbreviate(b []byte) string {
	const max = 40
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}

// Content kinds a result can carry, besides the MIME types of its blocks.
const (
	// KindStructured is the kind of structuredContent (and of its text copy).
	KindStructured = "application/json"
	// KindText is the kind of a text block.
	KindText = "text/plain"
	// kindUnknown is the kind of a block that names no MIME type.
	kindUnknown = "application/octet-stream"
)

// ContentKind returns the kind of a content block: text/plain for text, the
// mimeType of an image, audio or resource link, the mimeType of an embedded
// resource (text/plain or application/octet-stream when it gives none, for
// text and blob resources), and application/octet-stream for a block that
// names no MIME type.
func ContentKind(block json.RawMessage) string {
	switch metadata.ContentType(block) {
	case metadata.ResultTypeText:
		return KindText
	case metadata.ResultTypeResource:
		var b struct {
			Resource struct {
				MimeType string           `json:"mimeType"`
				Text     *json.RawMessage `json:"text"`
			} `json:"resource"`
		}
		_ = json.Unmarshal(block, &b)
		switch {
		case b.Resource.MimeType != "":
			return normalKind(b.Resource.MimeType)
		case b.Resource.Text != nil:
			return KindText
		}
		return kindUnknown
	}
	var b struct {
		MimeType string `json:"mimeType"`
	}
	if json.Unmarshal(block, &b) == nil && b.MimeType != "" {
		return normalKind(b.MimeType)
	}
	return kindUnknown
}

// normalKind is a MIME type without parameters, in lower case.
func normalKind(mimeType string) string {
	if t, _, err := mime.ParseMediaType(mimeType); err == nil {
		return t
	}
	return strings.ToLower(strings.TrimSpace(mimeType))
}

// ParseContentKinds checks a declaration of content kinds: each a MIME type
// "type/subtype" without parameters, where the subtype may be "*" (any
// subtype). It returns them in lower case, without repeats, in order.
func ParseContentKinds(kinds []string) ([]string, error) {
	out := make([]string, 0, len(kinds))
	for _, k := range kinds {
		t, params, err := mime.ParseMediaType(k)
		main, sub, ok := strings.Cut(t, "/")
		if err != nil || len(params) > 0 || !ok || main == "*" || sub == "" || strings.TrimSpace(k) != k {
			return nil, fmt.Errorf("content kind %q is not a MIME type such as image/png or image/*", k)
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out, nil
}

// ContentKindError is a result whose content breaks the tool's declared
// content kinds.
type ContentKindError struct {
	Missing    []string // declared kinds no part of the result has
	Undeclared []string // kinds of parts the declaration does not list
}

func (e *ContentKindError) Error() string {
	var parts []string
	for _, k := range e.Missing {
		parts = append(parts, fmt.Sprintf("declared kind %s is missing", k))
	}
	for _, k := range e.Undeclared {
		parts = append(parts, fmt.Sprintf("kind %s is not declared", k))
	}
	return "does not match the declared content kinds: " + strings.Join(parts, "; ")
}

// CheckContentKinds checks res against declared kinds (as
// [ParseContentKinds] returns them; none means any content): every part of
// the result must be of a declared kind, and every declared kind must be
// present. structuredContent and its text copy are of kind
// application/json. isError results are not checked. A failure is a
// *ContentKindError.
func CheckContentKinds(declared []string, res *metadata.CallToolResult) error {
	if len(declared) == 0 || res == nil || res.IsError {
		return nil
	}
	seen := make([]bool, len(declared))
	var undeclared []string
	note := func(kind string) {
		found := false
		for i, d := range declared {
			if kindMatches(d, kind) {
				seen[i], found = true, true
			}
		}
		if !found && !slices.Contains(undeclared, kind) {
			undeclared = append(undeclared, kind)
		}
	}
	if len(res.StructuredContent) > 0 {
		note(KindStructured)
	}
	for _, b := range res.Content {
		if len(res.StructuredContent) > 0 && metadata.IsTextCopy(b, res.StructuredContent) {
			continue
		}
		note(ContentKind(b))
	}
	var missing []string
	for i, d := range declared {
		if !seen[i] {
			missing = append(missing, d)
		}
	}
	if len(missing) == 0 && len(undeclared) == 0 {
		return nil
	}
	return &ContentKindError{Missing: missing, Undeclared: undeclared}
}

func kindMatches(declared, kind string) bool {
	if prefix, ok := strings.CutSuffix(declared, "/*"); ok {
		return strings.HasPrefix(kind, prefix+"/")
	}
	return declared == kind
}
