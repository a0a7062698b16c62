package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KeyExecutablePath is the host.json key naming the custom handler's
// executable, as messages spell it.
const KeyExecutablePath = "customHandler.description.defaultExecutablePath"

// ExecutableNotFoundError is a handler executable host.json names that is
// not there: an absolute path that does not exist, or a relative one found
// neither in the app folder (joined with workerDirectory) nor, for a bare
// name, on PATH.
type ExecutableNotFoundError struct {
	// Path is defaultExecutablePath with its variables expanded.
	Path string
	// Dir is the folder it was looked for in; Root is the app folder.
	Dir, Root string
	// Err is why: exec.ErrNotFound for a bare name not on PATH, else the
	// error of the file's lookup.
	Err error
}

func (e *ExecutableNotFoundError) Error() string {
	named := fmt.Sprintf("the handler %q named by host.json's %s", e.Path, KeyExecutablePath)
	if filepath.IsAbs(e.Path) {
		return named + " does not exist"
	}
	where := "the app folder " + e.Root
	if filepath.Clean(e.Dir) != filepath.Clean(e.Root) {
		where = "the worker directory " + e.Dir + " (customHandler.description.workerDirectory)"
	}
	if !strings.ContainsRune(e.Path, '/') && !strings.ContainsRune(e.Path, filepath.Separator) {
		return named + " was not found in " + where + " (nor on PATH)"
	}
	return named + " was not found in " + where
}

func (e *ExecutableNotFoundError) Unwrap() error { return e.Err }

// Worker is host.json customHandler.description.
type Worker struct {
	// ExecutablePath is defaultExecutablePath as written (not yet expanded).
	ExecutablePath   string
	Arguments        []string
	WorkingDirectory string
	WorkerDirectory  string
}

// ExpandVars replaces %NAME% with the value lookup gives, as .NET's
// Environment.ExpandEnvironmentVariables does: unknown names stay as written.
func ExpandVars(s string, lookup func(string) (string, bool)) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var sb strings.Builder
	for {
		i := strings.IndexByte(s, '%')
		if i < 0 {
			break
		}
		j := strings.IndexByte(s[i+1:], '%')
		if j < 0 {
			break
		}
		name := s[i+1 : i+1+j]
		if v, ok := lookup(name); ok && name != "" {
			sb.WriteString(s[:i])
			sb.WriteString(v)
			s = s[i+j+2:]
			continue
		}
		// Not a variable: keep the first '%' and look again from the second.
		sb.WriteString(s[:i+1+j])
		s = s[i+1+j:]
	}
	sb.WriteString(s)
	return sb.String()
}

// ResolveExecutable applies the custom-handler path rule: a relative path is
// joined to base only if that file exists; otherwise it is a command looked up
// on PATH by exec.
func ResolveExecutable(base, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	joined := filepath.Join(base, path)
	if st, err := os.Stat(joined); err == nil && !st.IsDir() {
		return joined
	}
	return path
}

// ResolveDir joins a relative directory to root; "" means root.
func ResolveDir(root, dir string) string {
	if dir == "" {
		return root
	}
	if filepath.IsAbs(dir) {
		return dir
	}
	return filepath.Join(root, dir)
}
