package metadata

import (
	"encoding/json"
	"fmt"
	"strings"
)

// KeyDisabled is the function.json top-level key that disables a function:
// true, or the name of an app setting whose value is true or 1.
const KeyDisabled = "disabled"

// DisabledSettingName is the app setting that disables function name, as the
// Functions host reads it: AzureWebJobs.<name>.Disabled.
func DisabledSettingName(function string) string {
	return "AzureWebJobs." + function + ".Disabled"
}

// Disabled reports whether the Functions host would leave f out, and why: the
// app setting AzureWebJobs.<name>.Disabled is true or 1, or function.json
// "disabled" is true or names an app setting that is. setting looks up an
// app setting (the environment, then local.settings.json Values); nil
// means none is set.
func (f *Function) Disabled(setting func(name string) (string, bool)) (bool, string) {
	if setting == nil {
		setting = func(string) (string, bool) { return "", false }
	}
	name := DisabledSettingName(f.Name)
	if v, ok := setting(name); ok && settingTrue(v) {
		return true, fmt.Sprintf("the app setting %s is %q", name, v)
	}
	raw, ok := f.extraField(KeyDisabled)
	if !ok {
		return false, ""
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		if b {
			return true, `function.json says "disabled": true`
		}
		return false, ""
	}
	var ref string
	if json.Unmarshal(raw, &ref) == nil && ref != "" {
		if v, ok := setting(ref); ok && settingTrue(v) {
			return true, fmt.Sprintf("function.json says \"disabled\": %q, and that app setting is %q", ref, v)
		}
	}
	return false, ""
}

// settingTrue is the Functions host's reading of a boolean app setting.
func settingTrue(v string) bool {
	v = strings.TrimSpace(v)
	return strings.EqualFold(v, "true") || v == "1"
}

// extraField returns the value of the top-level key (matched exactly, as
// the Functions host reads function.json's own keys).
func (f *Function) extraField(key string) (json.RawMessage, bool) {
	for _, fl := range f.extra {
		if fl.Key == key {
			return fl.Value, true
		}
	}
	return nil, false
}
