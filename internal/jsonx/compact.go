package jsonx

import (
	"bytes"
	"encoding/json"
)

// AppendCompact appends data compacted, as json.Compact does, and fails
// where it fails. A valid value with no white space outside its strings,
// which is what this module and encoding/json write, is checked by a
// [Scanner] and appended as it is: json.Compact's byte-by-byte state
// machine costs a call path several microseconds per kilobyte.
func AppendCompact(dst, data []byte) ([]byte, error) {
	if Valid(data) && compactAlready(data) {
		return append(dst, data...), nil
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, data); err != nil {
		return buf.Bytes(), err
	}
	return buf.Bytes(), nil
}

// compactAlready reports whether valid, a valid JSON value, has no white
// space outside its strings (a string holds no raw tab or line break, and
// its spaces are its own).
func compactAlready(valid []byte) bool {
	for i := 0; i < len(valid); i++ {
		switch valid[i] {
		case ' ', '\t', '\n', '\r':
			return false
		case '"':
			for {
				j := bytes.IndexByte(valid[i+1:], '"')
				if j < 0 {
					return false
				}
				i += 1 + j
				escapes := 0
				for k := i - 1; valid[k] == '\\'; k-- {
					escapes++
				}
				if escapes%2 == 0 {
					break
				}
			}
		}
	}
	return true
}
