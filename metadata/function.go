package metadata

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/internal/parallel"
)

// Function is one function of a function app: its folder name and the
// contents of its function.json.
type Function struct {
	// Name is the function's folder name; the custom handler is invoked at
	// POST /{Name}.
	Name string
	// Bindings are the function's bindings, in file order.
	Bindings []*Binding
	// extra holds the other top-level keys (scriptFile, retry, …) in order.
	extra []Field
}

// FunctionError is a problem with one function: it names the function, the
// file and the reason. Reach it with errors.As.
type FunctionError struct {
	Function string // the function (folder) name
	File     string // the function.json path, when there is one
	Err      error  // the reason
}

func (e *FunctionError) Error() string {
	if e.File == "" {
		return fmt.Sprintf("function %q: %v", e.Function, e.Err)
	}
	return fmt.Sprintf("function %q (%s): %v", e.Function, e.File, e.Err)
}

func (e *FunctionError) Unwrap() error { return e.Err }

// validFunctionName is the folder-name rule of the Functions host,
// (?i)^[a-z][a-z0-9_\-]{0,127}$, checked as Go's regexp package matches
// that pattern: under case folding [a-z] also takes U+017F (ſ) and U+212A
// (the Kelvin sign), and the length counts runes. It is written out rather
// than compiled because every program that links this package would
// compile it at init (the bounded repetition expands to 128 copies: 1,700
// allocations).
func validFunctionName(name string) bool {
	n := 0
	for i, r := range name { // an invalid byte is utf8.RuneError: refused
		if n++; n > 128 {
			return false
		}
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', r == '\u017f', r == '\u212a':
		case i > 0 && ('0' <= r && r <= '9' || r == '_' || r == '-'):
		default:
			return false
		}
	}
	return n > 0
}

// validBindingName is the binding-name rule,
// ^([a-zA-Z][a-zA-Z0-9]{0,127}|\$return)$, written out for the reason
// validFunctionName is.
func validBindingName(name string) bool {
	if name == "$return" {
		return true
	}
	if name == "" || len(name) > 128 {
		return false
	}
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && '0' <= c && c <= '9':
		default:
			return false
		}
	}
	return true
}

// ErrNoBindings is the reason given for a function.json without bindings.
var ErrNoBindings = errors.New("at least one binding must be declared")

// ValidateFunctionName checks the Azure Functions folder-name rule: a letter,
// then up to 127 letters, digits, '_' or '-', and not "host". Letters may be of
// either case, as the Functions host allows; funcmcp's own names are lower case.
func ValidateFunctionName(name string) error {
	if !validFunctionName(name) {
		return fmt.Errorf("%q is not a valid function name: it must start with a letter and hold at most 128 letters, digits, '_' or '-'", name)
	}
	if strings.EqualFold(name, "host") {
		return fmt.Errorf("%q is not a valid function name: it is reserved", name)
	}
	return nil
}

// Validate checks the rules the Functions host applies when it indexes a
// function: the name rule, at least one binding, binding names, and "$return"
// only as an output.
func (f *Function) Validate() error {
	var errs []error
	if err := ValidateFunctionName(f.Name); err != nil {
		errs = append(errs, err)
	}
	if len(f.Bindings) == 0 {
		errs = append(errs, ErrNoBindings)
	}
	for i, b := range f.Bindings {
		if b == nil {
			errs = append(errs, fmt.Errorf("binding %d is null", i))
			continue
		}
		if b.Type() == "" {
			errs = append(errs, fmt.Errorf("binding %d has no type", i))
		}
		name := b.Name()
		if !validBindingName(name) {
			errs = append(errs, fmt.Errorf("binding %d: %q is not a valid binding name", i, name))
		} else if name == "$return" && !strings.EqualFold(b.Direction(), DirectionOut) {
			errs = append(errs, fmt.Errorf("binding %d: %q must have direction %q", i, name, DirectionOut))
		}
	}
	return errors.Join(errs...)
}

// ToolTriggers returns the function's mcpToolTrigger bindings (type matched
// case-insensitively).
func (f *Function) ToolTriggers() []*Binding {
	var out []*Binding
	for _, b := range f.Bindings {
		if b != nil && b.IsType(TypeMcpToolTrigger) {
			out = append(out, b)
		}
	}
	return out
}

// HasOutputBinding reports whether any binding has direction "out"
// (case-insensitive). Such functions return raw values, not the result envelope.
func (f *Function) HasOutputBinding() bool {
	for _, b := range f.Bindings {
		if b != nil && strings.EqualFold(b.Direction(), DirectionOut) {
			return true
		}
	}
	return false
}

// SetExtra sets a top-level key other than "bindings" (for example
// "scriptFile"), keeping its position.
func (f *Function) SetExtra(key string, value json.RawMessage) {
	f.extra = SetField(f.extra, key, value)
}

// MarshalJSON writes {"bindings":[…], <other keys in order>}.
func (f *Function) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	buf.WriteString(`{"bindings":[`)
	for i, b := range f.Bindings {
		if i > 0 {
			buf.WriteByte(',')
		}
		if b == nil {
			buf.WriteString("null")
			continue
		}
		data, err := b.MarshalJSON()
		if err != nil {
			return nil, err
		}
		buf.Write(data)
	}
	buf.WriteByte(']')
	for _, e := range f.extra {
		buf.WriteByte(',')
		buf.Write(mustMarshalString(e.Key))
		buf.WriteByte(':')
		buf.Write(e.Value)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// UnmarshalJSON reads a function.json document. Name is left unchanged.
func (f *Function) UnmarshalJSON(data []byte) error {
	if f.scan(data) {
		return nil
	}
	return f.unmarshalSlowly(data)
}

// unmarshalSlowly is UnmarshalJSON by encoding/json.
func (f *Function) unmarshalSlowly(data []byte) error {
	fields, err := decodeObjectSlowly(data)
	if err != nil {
		if errors.Is(err, errNotObject) {
			return errors.New("function.json must hold a JSON object")
		}
		return err
	}
	f.Bindings, f.extra = nil, nil
	for _, fl := range fields {
		if fl.Key != "bindings" {
			f.SetExtra(fl.Key, fl.Value)
			continue
		}
		if jsonx.IsNull(fl.Value) {
			continue
		}
		var raws []json.RawMessage
		if err := json.Unmarshal(fl.Value, &raws); err != nil {
			return errors.New(`"bindings" must be a JSON array`)
		}
		for i, raw := range raws {
			b := &Binding{}
			if err := b.UnmarshalJSON(raw); err != nil {
				return fmt.Errorf("binding %d: %w", i, err)
			}
			f.Bindings = append(f.Bindings, b)
		}
	}
	return nil
}

// scan is UnmarshalJSON in one pass over data, for a function.json that is
// valid JSON with an object per binding; false (f unchanged) for anything
// else, which UnmarshalJSON decodes by encoding/json to say what is wrong.
func (f *Function) scan(data []byte) bool {
	s := jsonx.NewScanner(data)
	s.Space()
	if s.Peek() != '{' {
		return false
	}
	var extra []Field
	var bindings []*Binding
	_, ok := s.Object(func(k []byte, escaped bool) bool {
		key, ok := keyText(k, escaped)
		if !ok {
			return false
		}
		s.Space()
		if key == "bindings" {
			if s.Literal("null") {
				return true
			}
			_, ok := s.Array(func() bool {
				s.Space()
				fields, ok := scanFields(&s)
				if ok {
					b := &Binding{}
					for _, fl := range fields {
						b.set(fl.Key, fl.Value)
					}
					bindings = append(bindings, b)
				}
				return ok
			})
			return ok
		}
		start := s.Pos()
		if !s.Skip() {
			return false
		}
		value, ok := compactValue(data[start:s.Pos()])
		extra = append(extra, Field{Key: key, Value: value})
		return ok
	})
	if !ok || !s.End() {
		return false
	}
	f.Bindings, f.extra = bindings, nil
	for _, fl := range extra {
		f.SetExtra(fl.Key, fl.Value)
	}
	return true
}

// Encode returns the function.json text: indented with two spaces, keys in
// order, ending with a newline. The same Function always gives the same bytes.
func (f *Function) Encode() ([]byte, error) {
	data, err := f.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, data, "", "  "); err != nil {
		return nil, err
	}
	buf.WriteByte('\n')
	return buf.Bytes(), nil
}

// EncodedSize returns len(f.Encode()) without writing the indented text:
// what the host's size rule for function.json (see [CheckFileSize]) needs.
func (f *Function) EncodedSize() (int, error) {
	data, err := f.MarshalJSON()
	if err != nil {
		return 0, err
	}
	return indentedLen(data) + 1, nil // and the final newline
}

// indentedLen is the length json.Indent(dst, data, "", "  ") writes for
// valid JSON data: a newline and two spaces a level before each member or
// element and before the end of a non-empty object or array, a space after
// each colon, and no space of data outside its strings (but the spaces
// after its end, which Indent keeps).
func indentedLen(data []byte) int {
	end := len(data)
	for end > 0 && isSpace(data[end-1]) {
		end--
	}
	n := len(data)
	depth := 0
	inString, escaped, opened := false, false, false
	for _, c := range data[:end] {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if isSpace(c) {
			n--
			continue
		}
		if opened && c != '}' && c != ']' { // the first member or element
			n += 1 + 2*depth
		}
		wasOpened := opened
		opened = false
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			opened = true
		case '}', ']':
			depth--
			if !wasOpened { // not empty
				n += 1 + 2*depth
			}
		case ',':
			n += 1 + 2*depth
		case ':':
			n++
		}
	}
	return n
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// ParseFunction decodes function.json data for the function called name and
// validates it. Errors are *FunctionError naming the function and file.
func ParseFunction(name, file string, data []byte) (*Function, error) {
	f := &Function{Name: name}
	if !f.scan(data) { // encoding/json says what is wrong
		if err := json.Unmarshal(data, f); err != nil {
			return nil, &FunctionError{Function: name, File: file, Err: fmt.Errorf("parsing: %w", err)}
		}
	}
	if err := f.Validate(); err != nil {
		return nil, &FunctionError{Function: name, File: file, Err: err}
	}
	return f, nil
}

// DefaultMaxFunctionFileBytes bounds a function.json read by [ReadApp] and
// [ReadFunction] when no other limit is given.
const DefaultMaxFunctionFileBytes = 1 << 20

// ReadOptions bound what reading an app folder may cost. nil means defaults.
type ReadOptions struct {
	// MaxFileBytes bounds each function.json; 0 means
	// DefaultMaxFunctionFileBytes.
	MaxFileBytes int64
}

func (o *ReadOptions) maxFileBytes() int64 {
	if o == nil || o.MaxFileBytes <= 0 {
		return DefaultMaxFunctionFileBytes
	}
	return o.MaxFileBytes
}

// ReadFunction reads dir/function.json. The file is read only when it is a
// regular file (a named pipe or a device would stall the reader) of at most
// the size limit; a refusal is a *FunctionError that says why.
func ReadFunction(dir string, opts *ReadOptions) (*Function, error) {
	name := filepath.Base(dir)
	file := filepath.Join(dir, FunctionFile)
	data, err := ReadRegularFile(file, opts.maxFileBytes())
	if err != nil {
		return nil, &FunctionError{Function: name, File: file, Err: err}
	}
	return ParseFunction(name, file, data)
}

// ReadApp reads every direct sub-folder of root that holds a function.json,
// sorted by name, as the Functions host does, with [ReadFunction]'s guards;
// a function.json (or function folder) that is a link to something outside
// root is not read.
// Folders without one are skipped. A function that fails to load is left out
// and its *FunctionError is returned in errs; the others still load.
func ReadApp(root string, opts *ReadOptions) (fns []*Function, errs []error, err error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, nil, fmt.Errorf("reading script root: %w", err)
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, nil, fmt.Errorf("reading script root: %w", err)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name() < entries[j].Name() })
	// Each folder is read on its own (on every CPU: large apps have
	// thousands); the results keep the folders' order.
	type read struct {
		fn  *Function
		err error
	}
	out := make([]read, len(entries))
	parallel.For(len(entries), func(i int) {
		out[i].fn, out[i].err = readAppFolder(root, realRoot, entries[i], opts)
	})
	for _, r := range out {
		switch {
		case r.err != nil:
			errs = append(errs, r.err)
		case r.fn != nil:
			fns = append(fns, r.fn)
		}
	}
	return fns, errs, nil
}

// readAppFolder reads the function in root's folder entry; nil and no
// error when it is not a folder with a function.json.
func readAppFolder(root, realRoot string, entry fs.DirEntry, opts *ReadOptions) (*Function, error) {
	name := entry.Name()
	dir := filepath.Join(root, name)
	file := filepath.Join(dir, FunctionFile)
	if entry.IsDir() { // a folder, not a link to one
		st, err := os.Lstat(file)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err == nil && st.Mode()&fs.ModeSymlink == 0 {
			// Nothing below root is a link: the file is inside the app.
			return ReadFunction(dir, opts)
		}
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return nil, nil
	}
	if _, statErr := os.Stat(file); errors.Is(statErr, fs.ErrNotExist) {
		return nil, nil
	}
	if err := within(realRoot, file); err != nil {
		return nil, &FunctionError{Function: name, File: file, Err: err}
	}
	return ReadFunction(dir, opts)
}

// CheckFileSize is the size rule for a function.json: at most limit bytes
// (the host's limit; [DefaultMaxFunctionFileBytes] unless configured). The
// host applies it before it reads a file, and the worker SDK before it writes
// one, with the same message.
func CheckFileSize(size, limit int64) error {
	if size > limit {
		return fmt.Errorf("%d bytes, more than the limit of %d", size, limit)
	}
	return nil
}

// within checks that file, its links followed, is inside the folder realRoot
// (itself with links followed): a link to a file elsewhere on the machine
// is not part of the app.
func within(realRoot, file string) error {
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(realRoot, real)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return errors.New("a link to a file outside the app folder: not read")
	}
	return nil
}

// ReadRegularFile reads file when it is a regular file of at most limit
// bytes. It never waits on a named pipe or a device: the file is opened
// without blocking and checked before anything is read (a check before
// opening could be raced), and the limit is checked again while reading,
// as the file may grow. A missing file gives an error matching
// fs.ErrNotExist. The host reads host.json, local.settings.json, its keys
// and every function.json this way.
func ReadRegularFile(file string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(file, os.O_RDONLY|openNonBlocking, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	switch {
	case !st.Mode().IsRegular():
		return nil, fmt.Errorf("not a regular file (%s): not read", fileKind(st.Mode()))
	case st.Size() > limit:
		return nil, fmt.Errorf("%w: not read", CheckFileSize(st.Size(), limit))
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("more than the limit of %d bytes: not read", limit)
	}
	return data, nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m.IsDir():
		return "a directory"
	}
	return "mode " + m.String()
}
