package metadata

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/funcmcp/funcmcp/internal/jsonx"
)

// OutputValidation says what happens to a tool result whose
// structuredContent does not match the tool's output schema, or whose
// content kinds break the tool's declaration. The zero value means "not
// set here": the next level decides (tool, then app, then [ValidationStrict]).
type OutputValidation string

const (
	// ValidationStrict turns a broken result into an isError result that
	// names the tool and says what is wrong (the default).
	ValidationStrict OutputValidation = "strict"
	// ValidationWarn delivers the result as it is and logs what is wrong.
	ValidationWarn OutputValidation = "warn"
	// ValidationOff checks nothing.
	ValidationOff OutputValidation = "off"
)

// ParseOutputValidation reads a setting, case-insensitively; "" gives "".
func ParseOutputValidation(s string) (OutputValidation, error) {
	return parseChoice(s, ValidationStrict, ValidationWarn, ValidationOff)
}

// parseChoice reads one of choices, case-insensitively; "" gives "".
func parseChoice[T ~string](s string, choices ...T) (T, error) {
	v := T(strings.ToLower(strings.TrimSpace(s)))
	if v == "" || slices.Contains(choices, v) {
		return v, nil
	}
	names := make([]string, len(choices))
	for i, c := range choices {
		names[i] = string(c)
	}
	return "", fmt.Errorf("%q is not one of %s", s, strings.Join(names, ", "))
}

// TextCopy says which text goes with structuredContent for clients that
// read only content. The zero value means "not set here", as for
// [OutputValidation]; the default is [TextCopyJSON].
type TextCopy string

const (
	// TextCopyJSON adds a text block holding the same JSON as
	// structuredContent, as the MCP specification recommends (the default).
	TextCopyJSON TextCopy = "json"
	// TextCopyNone adds no text: the content is what the handler returned.
	TextCopyNone TextCopy = "none"
	// TextCopySummary lets the handler's own text blocks stand for the
	// structured content; the JSON copy is added only when there are none.
	TextCopySummary TextCopy = "summary"
)

// ParseTextCopy reads a setting, case-insensitively; "" gives "".
func ParseTextCopy(s string) (TextCopy, error) {
	return parseChoice(s, TextCopyJSON, TextCopyNone, TextCopySummary)
}

// AddTextCopy adds the text copy of res's structuredContent as mode says
// ("" means [TextCopyJSON]). Results without structuredContent and isError
// results are left alone, and a copy already there is not added twice, so
// the worker and then the host may both apply it. It is the one place where
// the text copy is made.
func AddTextCopy(res *CallToolResult, mode TextCopy) {
	if res == nil || res.IsError || len(res.StructuredContent) == 0 || mode == TextCopyNone {
		return
	}
	var scratch *[]byte // the copy to compare with, encoded once when needed
	defer func() {
		if scratch != nil {
			putCopy(scratch)
		}
	}()
	for _, b := range res.Content {
		if ContentType(b) != ResultTypeText {
			continue
		}
		if mode == TextCopySummary {
			return
		}
		if scratch == nil {
			scratch = copyOf(res.StructuredContent)
		}
		if isTextCopy(b, res.StructuredContent, *scratch) {
			return
		}
	}
	// Its text, not copied twice: TextContent copies it into the block.
	res.Content = append(res.Content, TextContent(textOf(res.StructuredContent)))
}

// copies are buffers for the text copy a result's text blocks are
// compared with: the worker adds the copy, and the host, which applies
// AddTextCopy again, finds it there.
var copies = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledCopy bounds the buffers kept in copies.
const maxPooledCopy = 64 << 10

// IsTextCopy reports whether block is a text block whose text is exactly
// structured (the copy [AddTextCopy] makes).
func IsTextCopy(block, structured json.RawMessage) bool {
	if ContentType(block) != ResultTypeText {
		return false
	}
	scratch := copyOf(structured)
	defer putCopy(scratch)
	return isTextCopy(block, structured, *scratch)
}

// copyOf returns a buffer of copies holding the text copy of structured;
// give it back with putCopy.
func copyOf(structured json.RawMessage) *[]byte {
	scratch := copies.Get().(*[]byte)
	*scratch = appendTextContent((*scratch)[:0], textOf(structured))
	return scratch
}

// textOf is structured's text read in place, for a call that keeps none
// of it.
func textOf(structured json.RawMessage) string {
	return unsafe.String(unsafe.SliceData(structured), len(structured))
}

// putCopy gives back a buffer of copyOf, unless it grew large.
func putCopy(scratch *[]byte) {
	if cap(*scratch) <= maxPooledCopy {
		copies.Put(scratch)
	}
}

// isTextCopy is IsTextCopy for a text block, given the copy as funcmcp
// encodes it: equal bytes answer at once, other spellings are decoded.
func isTextCopy(block, structured, copied json.RawMessage) bool {
	if bytes.Equal(block, copied) {
		return true
	}
	var b struct {
		Text string `json:"text"`
	}
	return json.Unmarshal(block, &b) == nil && b.Text == string(structured)
}

// OutputSettings are the app-wide settings of host.json extensions.mcp that
// say how a tool's results and arguments are checked; "" fields are not set.
type OutputSettings struct {
	// Validation is what happens to a result that breaks the tool's output
	// rules (outputValidation).
	Validation OutputValidation
	// InputValidation is what happens to arguments that break the tool's
	// input schema (inputValidation), with the same modes.
	InputValidation OutputValidation
	TextCopy        TextCopy
}

// SettingError is a bad value in host.json; Key is its path, e.g.
// "extensions.mcp.outputValidation".
type SettingError struct {
	Key string
	Err error
}

func (e *SettingError) Error() string { return fmt.Sprintf("%s: %v", e.Key, e.Err) }
func (e *SettingError) Unwrap() error { return e.Err }

// ParseOutputSettings reads extensions.mcp.outputValidation,
// extensions.mcp.inputValidation and extensions.mcp.textCopy from host.json
// text, with keys matched
// case-insensitively as the Functions host's configuration does. Absent
// sections and keys are not set. Every bad value is returned, each a
// *SettingError.
func ParseOutputSettings(hostJSON []byte) (OutputSettings, error) {
	var out OutputSettings
	var root map[string]json.RawMessage
	if err := json.Unmarshal(hostJSON, &root); err != nil {
		return out, fmt.Errorf("parsing host.json: %w", err)
	}
	mcp := root
	for _, key := range []string{"extensions", "mcp"} {
		raw, ok := LookupFoldMap(mcp, key)
		mcp = nil
		if !ok || json.Unmarshal(raw, &mcp) != nil {
			return out, nil // a malformed section is the host's to report
		}
	}
	var errs []error
	str := func(key string) string {
		raw, ok := LookupFoldMap(mcp, key)
		var s string
		if ok && json.Unmarshal(raw, &s) != nil && !jsonx.IsNull(raw) {
			errs = append(errs, &SettingError{Key: "extensions.mcp." + key, Err: errors.New("must be a string")})
		}
		return s
	}
	var err error
	if out.Validation, err = ParseOutputValidation(str(HostKeyOutputValidation)); err != nil {
		errs = append(errs, &SettingError{Key: "extensions.mcp." + HostKeyOutputValidation, Err: err})
	}
	if out.InputValidation, err = ParseOutputValidation(str(HostKeyInputValidation)); err != nil {
		errs = append(errs, &SettingError{Key: "extensions.mcp." + HostKeyInputValidation, Err: err})
	}
	if out.TextCopy, err = ParseTextCopy(str(HostKeyTextCopy)); err != nil {
		errs = append(errs, &SettingError{Key: "extensions.mcp." + HostKeyTextCopy, Err: err})
	}
	return out, errors.Join(errs...)
}
