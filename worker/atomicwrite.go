package worker

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/funcmcp/funcmcp/metadata"
)

// writeFunctions writes every function.json through a temporary file in its
// folder and renames them only when all were written, so that a failure
// leaves no partial output behind. It returns the files written.
func writeFunctions(dir string, fns []*metadata.Function) ([]string, error) {
	type pending struct{ tmp, file string }
	var (
		todo    []pending
		created []string
	)
	cleanup := func() {
		for _, p := range todo {
			_ = os.Remove(p.tmp)
		}
		for i := len(created) - 1; i >= 0; i-- {
			_ = os.Remove(created[i]) // only removes what is still empty
		}
	}
	datas := make([][]byte, len(fns))
	for i, f := range fns {
		data, err := f.Encode()
		if err != nil {
			return nil, fmt.Errorf("encoding function %q: %w", f.Name, err)
		}
		datas[i] = data
	}
	if err := mkdirTrack(dir, &created); err != nil {
		return nil, fmt.Errorf("creating %s: %w", dir, err)
	}
	for i, f := range fns {
		fdir := filepath.Join(dir, f.Name)
		if err := mkdirTrack(fdir, &created); err != nil {
			cleanup()
			return nil, &metadata.FunctionError{Function: f.Name, File: fdir, Err: err}
		}
		tmp, err := os.CreateTemp(fdir, ".function.json.*")
		if err != nil {
			cleanup()
			return nil, &metadata.FunctionError{Function: f.Name, File: fdir, Err: err}
		}
		todo = append(todo, pending{tmp: tmp.Name(), file: filepath.Join(fdir, metadata.FunctionFile)})
		_, werr := io.Copy(tmp, bytes.NewReader(datas[i]))
		cerr := tmp.Close()
		if err := errors.Join(werr, cerr); err != nil {
			cleanup()
			return nil, &metadata.FunctionError{Function: f.Name, File: tmp.Name(), Err: err}
		}
		_ = os.Chmod(tmp.Name(), 0o644)
	}
	var files []string
	for _, p := range todo {
		if err := os.Rename(p.tmp, p.file); err != nil {
			cleanup()
			return files, fmt.Errorf("writing %s: %w", p.file, err)
		}
		files = append(files, p.file)
	}
	return files, nil
}

// mkdirTrack creates dir and its missing parents, remembering the ones it
// created.
func mkdirTrack(dir string, created *[]string) error {
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
		*created = append(*created, missing[i])
	}
	return nil
}
