package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/funcmcp/funcmcp/metadata"
)

// File names read from the script root.
const (
	HostFile          = "host.json"
	LocalSettingsFile = "local.settings.json"
)

// OutputValidation says what the host does with a tool result whose
// structuredContent does not match the tool's output schema, or whose
// content breaks the tool's declared content kinds (host.json
// extensions.mcp.outputValidation, overridden per tool by function.json
// outputValidation). The worker SDK reads the same setting.
type OutputValidation = metadata.OutputValidation

// The output validation modes.
const (
	// ValidationStrict turns a broken result into an isError result (the default).
	ValidationStrict = metadata.ValidationStrict
	// ValidationWarn delivers the result as it is and logs a warning.
	ValidationWarn = metadata.ValidationWarn
	// ValidationOff skips validation.
	ValidationOff = metadata.ValidationOff
)

// ConfigError is a problem with host.json or local.settings.json. Reach it
// with errors.As.
type ConfigError struct {
	File string // the file's path
	Key  string // the key path, e.g. "customHandler.description.defaultExecutablePath"; "" for the whole file
	Err  error
}

func (e *ConfigError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", e.File, e.Key, e.Err)
}

func (e *ConfigError) Unwrap() error { return e.Err }

// workerDescription is host.json customHandler.description.
type workerDescription struct {
	// ExecutablePath is defaultExecutablePath as written (not yet expanded).
	ExecutablePath   string
	Arguments        []string
	WorkingDirectory string
	WorkerDirectory  string
}

// config is what the host reads from host.json and local.settings.json.
type config struct {
	// Worker is nil when host.json has no customHandler (or httpWorker) section.
	Worker        *workerDescription
	ServerName    string
	ServerVersion string
	Instructions  string
	// Output holds extensions.mcp.outputValidation and .textCopy; each ""
	// when not set.
	Output metadata.OutputSettings
	// AuthLevel is extensions.mcp.system.webhookAuthorizationLevel.
	AuthLevel AuthLevel
	// FunctionTimeout is host.json functionTimeout: 0 when not set, -1 for
	// "unbounded" ("-1").
	FunctionTimeout time.Duration
	// Values are local.settings.json Values, sorted by key.
	Values []envVar
}

type envVar struct{ Key, Value string }

// object is a decoded JSON object whose keys are matched case-insensitively,
// as the .NET configuration binder does.
type object map[string]json.RawMessage

func (o object) get(key string) (json.RawMessage, bool) {
	return metadata.LookupFoldMap(o, key)
}

func isNull(raw json.RawMessage) bool {
	return len(raw) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null"))
}

// child returns the object at key: (nil, nil) when absent or null.
func (o object) child(key string) (object, error) {
	raw, ok := o.get(key)
	if !ok || isNull(raw) {
		return nil, nil
	}
	var c object
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, errors.New("must be a JSON object")
	}
	return c, nil
}

// str returns the string at key: ("", false, nil) when absent or null.
func (o object) str(key string) (string, bool, error) {
	raw, ok := o.get(key)
	if !ok || isNull(raw) {
		return "", false, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false, errors.New("must be a string")
	}
	return s, true, nil
}

// strings returns the array of strings at key.
func (o object) strings(key string) ([]string, error) {
	raw, ok := o.get(key)
	if !ok || isNull(raw) {
		return nil, nil
	}
	var ss []string
	if err := json.Unmarshal(raw, &ss); err != nil {
		return nil, errors.New("must be an array of strings")
	}
	return ss, nil
}

// loadConfig reads root/host.json and root/local.settings.json. All problems
// found are returned together, each a *ConfigError.
func loadConfig(root string) (*config, error) {
	cfg := &config{ServerName: metadata.DefaultServerName, ServerVersion: metadata.DefaultServerVersion, AuthLevel: AuthSystem}
	var errs []error
	hostFile := filepath.Join(root, HostFile)
	data, err := os.ReadFile(hostFile)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &ConfigError{File: hostFile, Err: errors.New("not found: the script root must hold a host.json")}
		}
		return nil, &ConfigError{File: hostFile, Err: err}
	}
	var doc object
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, &ConfigError{File: hostFile, Err: fmt.Errorf("parsing: %w", err)}
	}
	bad := func(key string, err error) { errs = append(errs, &ConfigError{File: hostFile, Key: key, Err: err}) }

	// customHandler wins over the legacy httpWorker section.
	section := "customHandler"
	ch, err := doc.child(section)
	if err != nil {
		bad(section, err)
	}
	if ch == nil && err == nil {
		section = "httpWorker"
		if ch, err = doc.child(section); err != nil {
			bad(section, err)
		}
	}
	if ch != nil {
		cfg.Worker, err = parseWorkerDescription(ch, section, bad)
		if err != nil {
			bad(section+".description", err)
		}
	}

	if s, ok, err := doc.str("functionTimeout"); err != nil {
		bad("functionTimeout", err)
	} else if ok {
		if cfg.FunctionTimeout, err = parseTimeSpan(s); err != nil {
			bad("functionTimeout", err)
		}
	}

	ext, err := doc.child("extensions")
	if err != nil {
		bad("extensions", err)
	}
	mcp, err := ext.child("mcp")
	if err != nil {
		bad("extensions.mcp", err)
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"serverName", &cfg.ServerName}, {"serverVersion", &cfg.ServerVersion}, {"instructions", &cfg.Instructions}} {
		s, ok, err := mcp.str(f.key)
		if err != nil {
			bad("extensions.mcp."+f.key, err)
		} else if ok {
			*f.dst = s
		}
	}
	output, err := metadata.ParseOutputSettings(data)
	for _, e := range splitErrors(err) {
		var se *metadata.SettingError
		if errors.As(e, &se) {
			bad(se.Key, se.Err)
		} else {
			bad("extensions.mcp", e)
		}
	}
	cfg.Output = output

	system, err := mcp.child("system")
	if err != nil {
		bad("extensions.mcp.system", err)
	}
	if s, ok, err := system.str("webhookAuthorizationLevel"); err != nil {
		bad("extensions.mcp.system.webhookAuthorizationLevel", err)
	} else if ok {
		level, err := parseAuthLevel(s)
		if err != nil {
			bad("extensions.mcp.system.webhookAuthorizationLevel", err)
		}
		cfg.AuthLevel = level
	}

	values, err := loadLocalSettings(filepath.Join(root, LocalSettingsFile))
	if err != nil {
		errs = append(errs, err)
	}
	cfg.Values = values
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return cfg, nil
}

func parseWorkerDescription(ch object, section string, bad func(string, error)) (*workerDescription, error) {
	desc, err := ch.child("description")
	if err != nil {
		return nil, err
	}
	if desc == nil {
		return nil, errors.New("missing: the worker description is required")
	}
	w := &workerDescription{}
	key := section + ".description."
	var ok bool
	if w.ExecutablePath, ok, err = desc.str("defaultExecutablePath"); err != nil {
		bad(key+"defaultExecutablePath", err)
	} else if !ok || strings.TrimSpace(w.ExecutablePath) == "" {
		bad(key+"defaultExecutablePath", errors.New("cannot be empty"))
	}
	if w.Arguments, err = desc.strings("arguments"); err != nil {
		bad(key+"arguments", err)
	}
	if w.WorkingDirectory, _, err = desc.str("workingDirectory"); err != nil {
		bad(key+"workingDirectory", err)
	}
	if w.WorkerDirectory, _, err = desc.str("workerDirectory"); err != nil {
		bad(key+"workerDirectory", err)
	}
	return w, nil
}

// loadLocalSettings reads the Values of local.settings.json; a missing file
// is no error. Non-string values are passed as their JSON text.
func loadLocalSettings(file string) ([]envVar, error) {
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &ConfigError{File: file, Err: err}
	}
	var doc object
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, &ConfigError{File: file, Err: fmt.Errorf("parsing: %w", err)}
	}
	vals, err := doc.child("Values")
	if err != nil {
		return nil, &ConfigError{File: file, Key: "Values", Err: err}
	}
	out := make([]envVar, 0, len(vals))
	for k, raw := range vals {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			s = string(raw)
			if isNull(raw) {
				s = ""
			}
		}
		out = append(out, envVar{k, s})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// expandVars replaces %NAME% with the value lookup gives, as .NET's
// Environment.ExpandEnvironmentVariables does: unknown names stay as written.
func expandVars(s string, lookup func(string) (string, bool)) string {
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

// resolveExecutable applies the custom-handler path rule: a relative path is
// joined to base only if that file exists; otherwise it is a command looked up
// on PATH by exec.
func resolveExecutable(base, path string) string {
	if filepath.IsAbs(path) {
		return path
	}
	joined := filepath.Join(base, path)
	if st, err := os.Stat(joined); err == nil && !st.IsDir() {
		return joined
	}
	return path
}

// resolveDir joins a relative directory to root; "" means root.
func resolveDir(root, dir string) string {
	if dir == "" {
		return root
	}
	if filepath.IsAbs(dir) {
		return dir
	}
	return filepath.Join(root, dir)
}

// parseTimeSpan reads a .NET TimeSpan as host.json writes functionTimeout:
// "[d.]hh:mm:ss[.fffffff]", or "-1" for no limit (returned as -1). The
// Functions host's minimum is one second.
func parseTimeSpan(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if s == "-1" {
		return -1, nil
	}
	bad := fmt.Errorf("%q is not a time span like \"00:05:00\" (or -1 for no limit)", s)
	var days int64
	rest := s
	if i := strings.IndexByte(rest, ':'); i > 0 {
		if j := strings.IndexByte(rest[:i], '.'); j >= 0 {
			d, err := strconv.ParseInt(rest[:j], 10, 32)
			if err != nil || d < 0 {
				return 0, bad
			}
			days, rest = d, rest[j+1:]
		}
	}
	parts := strings.Split(rest, ":")
	if len(parts) != 3 {
		return 0, bad
	}
	h, err1 := strconv.ParseInt(parts[0], 10, 32)
	m, err2 := strconv.ParseInt(parts[1], 10, 32)
	sec, err3 := strconv.ParseFloat(parts[2], 64)
	if err1 != nil || err2 != nil || err3 != nil || h < 0 || h > 23 || m < 0 || m > 59 || sec < 0 || sec >= 60 {
		return 0, bad
	}
	d := time.Duration(days)*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec*float64(time.Second))
	if d < time.Second {
		return 0, fmt.Errorf("%q is shorter than the minimum of 1 second", s)
	}
	return d, nil
}
