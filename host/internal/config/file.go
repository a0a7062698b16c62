package config

import (
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MaxFileBytes bounds host.json, local.settings.json and the keys file, as
// metadata.DefaultMaxFunctionFileBytes bounds a function.json.
const MaxFileBytes = 1 << 20

// ReadFile reads file when it is a regular file of at most limit bytes. It
// never waits on a named pipe or a device: the file is opened without
// blocking and checked before anything is read (a check before opening
// could be raced). A missing file gives an error matching fs.ErrNotExist.
func ReadFile(file string, limit int64) ([]byte, error) {
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
		return nil, fmt.Errorf("%d bytes, more than the limit of %d: not read", st.Size(), limit)
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
		return "a folder"
	}
	return "not a plain file"
}
