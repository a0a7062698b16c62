package metadata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// WriteFunction validates f and writes root/<f.Name>/function.json, as
// [WriteFunctions] does.
func WriteFunction(root string, f *Function) error {
	_, err := WriteFunctions(root, []*Function{f})
	return err
}

// WriteFunctions validates every function and writes root/<name>/function.json
// for each, all or nothing: each file is first written to a temporary file
// beside it, and the temporary files replace the real ones only once all were
// written. If a replacement fails, the files already replaced get their
// earlier content back and folders it created are removed, so a failure
// leaves the app folder as it was. It returns the files written.
//
// A function that breaks [Function.Validate] or whose text is larger than
// [DefaultMaxFunctionFileBytes] (the host would not read it) is refused
// before anything is written; the errors are *FunctionError, joined.
func WriteFunctions(root string, fns []*Function) ([]string, error) {
	datas := make([][]byte, len(fns))
	var errs []error
	for i, f := range fns {
		file := filepath.Join(root, f.Name, FunctionFile)
		if err := f.Validate(); err != nil {
			errs = append(errs, &FunctionError{Function: f.Name, File: file, Err: err})
			continue
		}
		data, err := f.Encode()
		if err == nil {
			err = CheckFileSize(int64(len(data)), DefaultMaxFunctionFileBytes)
		}
		if err != nil {
			errs = append(errs, &FunctionError{Function: f.Name, File: file, Err: err})
			continue
		}
		datas[i] = data
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	w := &setWriter{}
	if err := w.mkdir(root); err != nil {
		return nil, fmt.Errorf("creating %s: %w", root, err)
	}
	for i, f := range fns {
		if err := w.stage(filepath.Join(root, f.Name), f.Name, datas[i]); err != nil {
			w.rollback()
			return nil, err
		}
	}
	if err := w.commit(); err != nil {
		w.rollback()
		return nil, err
	}
	return w.files(), nil
}

// setWriter replaces a set of files together (see [WriteFunctions]).
type setWriter struct {
	created []string // folders made, parents first
	staged  []staged
}

type staged struct {
	function string
	tmp      string // the new content, beside file
	file     string
	backup   string // a link to the earlier file; "" when there was none
	replaced bool
}

// mkdir creates dir and its missing parents, remembering those it created.
func (w *setWriter) mkdir(dir string) error {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		w.created = append(w.created, missing[i])
	}
	return nil
}

// stage writes data to a temporary file in dir.
func (w *setWriter) stage(dir, function string, data []byte) error {
	file := filepath.Join(dir, FunctionFile)
	fail := func(err error) error { return &FunctionError{Function: function, File: file, Err: err} }
	if err := w.mkdir(dir); err != nil {
		return fail(err)
	}
	tmp, err := os.CreateTemp(dir, ".function.json.*")
	if err != nil {
		return fail(err)
	}
	w.staged = append(w.staged, staged{function: function, tmp: tmp.Name(), file: file})
	_, werr := tmp.Write(data)
	if err := errors.Join(werr, tmp.Close(), os.Chmod(tmp.Name(), 0o644)); err != nil {
		return fail(err)
	}
	return nil
}

// commit moves every staged file in place, keeping a link to each earlier
// file until all are in place.
func (w *setWriter) commit() error {
	for i := range w.staged {
		s := &w.staged[i]
		if _, err := os.Lstat(s.file); err == nil {
			s.backup = s.tmp + ".old"
			if err := os.Link(s.file, s.backup); err != nil {
				s.backup = ""
				return &FunctionError{Function: s.function, File: s.file, Err: fmt.Errorf("keeping the earlier file: %w", err)}
			}
		}
		if err := os.Rename(s.tmp, s.file); err != nil {
			return &FunctionError{Function: s.function, File: s.file, Err: err}
		}
		s.replaced = true
	}
	for _, s := range w.staged {
		if s.backup != "" {
			_ = os.Remove(s.backup)
		}
	}
	return nil
}

// rollback puts back what commit replaced and removes what stage made.
func (w *setWriter) rollback() {
	for i := len(w.staged) - 1; i >= 0; i-- {
		s := w.staged[i]
		switch {
		case s.replaced && s.backup != "":
			_ = os.Rename(s.backup, s.file)
		case s.replaced:
			_ = os.Remove(s.file)
		case s.backup != "":
			_ = os.Remove(s.backup)
		}
		_ = os.Remove(s.tmp)
	}
	for i := len(w.created) - 1; i >= 0; i-- {
		_ = os.Remove(w.created[i]) // only removes what is still empty
	}
}

func (w *setWriter) files() []string {
	out := make([]string, len(w.staged))
	for i, s := range w.staged {
		out[i] = s.file
	}
	return out
}
