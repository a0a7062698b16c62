package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// File names read from the script root.
const (
	HostFile          = "host.json"
	LocalSettingsFile = "local.settings.json"
)

// Error is a problem with host.json, local.settings.json or the keys file.
// Reach it with errors.As.
type Error struct {
	File string // the file's path
	Key  string // the key path, e.g. "customHandler.description.defaultExecutablePath"; "" for the whole file
	Err  error
}

func (e *Error) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", e.File, e.Key, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// SyntaxError is a JSON error of a file at a place in it: Line and
// Column count from 1, Column in characters (a tab is one).
type SyntaxError struct {
	Line, Column int
	Err          error // a *json.SyntaxError or *json.UnmarshalTypeError
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %v", e.Line, e.Column, e.Err)
}

func (e *SyntaxError) Unwrap() error { return e.Err }

// positioned gives a JSON decoding error of data its line and column; other
// errors are returned as they are.
func positioned(data []byte, err error) error {
	var (
		syntax *json.SyntaxError
		typ    *json.UnmarshalTypeError
		offset int64
	)
	switch {
	case errors.As(err, &syntax):
		offset = syntax.Offset
	case errors.As(err, &typ):
		offset = typ.Offset
	default:
		return err
	}
	// The error comes after offset bytes: the byte at offset-1 is the one
	// the decoder stopped at; at the end of the input, the place is just
	// after the last byte.
	at := int(min(max(offset, 1), int64(len(data)))) - 1
	if syntax != nil && syntax.Error() == "unexpected end of JSON input" {
		at = len(data)
	}
	line, column := 1, 0
	for _, r := range string(data[:max(at, 0)]) {
		if r == '\n' {
			line, column = line+1, 0
			continue
		}
		column++
	}
	return &SyntaxError{Line: line, Column: column + 1, Err: err}
}

// Config is what the host reads from host.json and local.settings.json.
type Config struct {
	// Worker is nil when host.json has no customHandler (or httpWorker) section.
	Worker        *Worker
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
	Values []Setting
	// TelemetryMode is host.json telemetryMode ("" when not set):
	// "OpenTelemetry" turns on OpenTelemetry export (see docs/telemetry.md).
	TelemetryMode string
	// Warnings are problems that do not stop the host, each a line for
	// its log at start: keys of extensions.mcp that no host reads.
	Warnings []string
}

// Setting is one app setting of local.settings.json Values.
type Setting struct{ Key, Value string }

// object is a decoded JSON object whose keys are matched case-insensitively,
// as the .NET configuration binder does.
type object map[string]json.RawMessage

func (o object) get(key string) (json.RawMessage, bool) {
	return metadata.LookupFoldMap(o, key)
}

// child returns the object at key: (nil, nil) when absent or null.
func (o object) child(key string) (object, error) {
	raw, ok := o.get(key)
	if !ok || jsonx.IsAbsent(raw) {
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
	if !ok || jsonx.IsAbsent(raw) {
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
	if !ok || jsonx.IsAbsent(raw) {
		return nil, nil
	}
	var ss []string
	if err := json.Unmarshal(raw, &ss); err != nil {
		return nil, errors.New("must be an array of strings")
	}
	return ss, nil
}

// Load reads root/host.json and root/local.settings.json. All problems
// found are returned together, each a *Error.
func Load(root string) (*Config, error) {
	cfg := &Config{ServerName: metadata.DefaultServerName, ServerVersion: metadata.DefaultServerVersion, AuthLevel: AuthSystem}
	var errs []error
	hostFile := filepath.Join(root, HostFile)
	data, err := metadata.ReadRegularFile(hostFile, MaxFileBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, &Error{File: hostFile, Err: errors.New("not found: the script root must hold a host.json")}
		}
		return nil, &Error{File: hostFile, Err: err}
	}
	var doc object
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, &Error{File: hostFile, Err: fmt.Errorf("parsing: %w", positioned(data, err))}
	}
	bad := func(key string, err error) { errs = append(errs, &Error{File: hostFile, Key: key, Err: err}) }

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
		cfg.Worker, err = parseWorker(ch, section, bad)
		if err != nil {
			bad(section+".description", err)
		}
	}

	if s, ok, err := doc.str("functionTimeout"); err != nil {
		bad("functionTimeout", err)
	} else if ok {
		if cfg.FunctionTimeout, err = ParseTimeSpan(s); err != nil {
			bad("functionTimeout", err)
		}
	}

	if s, ok, err := doc.str("telemetryMode"); err != nil {
		bad("telemetryMode", err)
	} else if ok {
		cfg.TelemetryMode = s
	}

	ext, err := doc.child("extensions")
	if err != nil {
		bad("extensions", err)
	}
	mcp, err := ext.child("mcp")
	if err != nil {
		bad("extensions.mcp", err)
	}
	cfg.Warnings = append(cfg.Warnings, unknownMCPKeys(mcp)...)
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

func parseWorker(ch object, section string, bad func(string, error)) (*Worker, error) {
	desc, err := ch.child("description")
	if err != nil {
		return nil, err
	}
	if desc == nil {
		return nil, errors.New("missing: the worker description is required")
	}
	w := &Worker{}
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
func loadLocalSettings(file string) ([]Setting, error) {
	data, err := metadata.ReadRegularFile(file, MaxFileBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, &Error{File: file, Err: err}
	}
	var doc object
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, &Error{File: file, Err: fmt.Errorf("parsing: %w", positioned(data, err))}
	}
	vals, err := doc.child("Values")
	if err != nil {
		return nil, &Error{File: file, Key: "Values", Err: err}
	}
	out := make([]Setting, 0, len(vals))
	for k, raw := range vals {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			s = string(raw)
			if jsonx.IsAbsent(raw) {
				s = ""
			}
		}
		out = append(out, Setting{k, s})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}

// Lookup reads the app setting name: the environment, then
// local.settings.json Values (an empty value counts as unset). from says
// where it was found, for messages ("" when it was not): never the value.
func (c *Config) Lookup(name string) (value, from string) {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v, "environment " + name
	}
	for _, v := range c.Values {
		if v.Key == name && v.Value != "" {
			return v.Value, LocalSettingsFile + " Values." + name
		}
	}
	return "", ""
}

// WorkerRuntimeSetting is the app setting that names the language stack of
// a function app; a custom handler app sets it to "custom".
const WorkerRuntimeSetting = "FUNCTIONS_WORKER_RUNTIME"

// WorkerRuntimeWarning says what is off with FUNCTIONS_WORKER_RUNTIME: ""
// when it is custom (in any case) or unset. Any other value is served all
// the same: the Functions host runs the custom handler whenever host.json
// describes one, whatever this setting says.
func (c *Config) WorkerRuntimeWarning() string {
	v, from := c.Lookup(WorkerRuntimeSetting)
	if from == "" || strings.EqualFold(strings.TrimSpace(v), "custom") {
		return ""
	}
	return fmt.Sprintf("%s is %q, not custom: a custom handler app sets it to custom. "+
		"The custom handler of host.json is served all the same, as the Functions host does, "+
		"but Azure and func start read this setting to choose the language stack of the app", from, v)
}

// AuthLevel is who may call the MCP endpoints
// (host.json extensions.mcp.system.webhookAuthorizationLevel).
type AuthLevel string

// Authorization levels.
const (
	// AuthAnonymous serves everyone.
	AuthAnonymous AuthLevel = "Anonymous"
	// AuthSystem (the default) needs the mcp_extension system key or the
	// master key.
	AuthSystem AuthLevel = "System"
	// AuthAdmin needs the master key.
	AuthAdmin AuthLevel = "Admin"
)

func parseAuthLevel(s string) (AuthLevel, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "anonymous":
		return AuthAnonymous, nil
	case "system", "function":
		return AuthSystem, nil
	case "admin":
		return AuthAdmin, nil
	}
	return AuthSystem, fmt.Errorf("%q is not one of Anonymous, Function, System, Admin", s)
}

// splitErrors flattens joined errors into their parts.
func splitErrors(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, splitErrors(e)...)
		}
		return out
	}
	return []error{err}
}

// MaxFileBytes bounds host.json, local.settings.json and the keys file, as
// metadata.DefaultMaxFunctionFileBytes bounds a function.json.
const MaxFileBytes = 1 << 20
