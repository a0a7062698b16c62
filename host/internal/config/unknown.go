package config

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/funcmcp/funcmcp/metadata"
)

// mcpKeys are the keys of host.json's extensions.mcp, and of the objects in
// it, that a host reads: funchost's and the worker's, and those of the
// Functions host's MCP extension that funchost does not use
// (encryptClientState, messageOptions). Keys match case-insensitively.
var mcpKeys = []struct {
	path string   // the object's key path in host.json
	keys []string // its keys, spelled as the docs spell them
}{
	{"extensions.mcp", []string{"serverName", "serverVersion", "instructions",
		metadata.HostKeyOutputValidation, metadata.HostKeyInputValidation, metadata.HostKeyTextCopy,
		"system", "encryptClientState", "messageOptions"}},
	{"extensions.mcp.system", []string{"webhookAuthorizationLevel"}},
	{"extensions.mcp.messageOptions", []string{"useAbsoluteUriForEndpoint"}},
}

// unknownMCPKeys returns a warning for each key of extensions.mcp (mcp),
// and of the objects in it, that no host reads: a misspelled setting is
// otherwise ignored without a word. Each names the nearest known key when
// one is close. The warnings are in the order of the key paths.
func unknownMCPKeys(mcp object) []string {
	var warnings []string
	for _, o := range mcpKeys {
		obj := mcp
		if rest, nested := strings.CutPrefix(o.path, "extensions.mcp."); nested {
			raw, ok := mcp.get(rest)
			obj = nil
			if !ok || json.Unmarshal(raw, &obj) != nil {
				continue // absent, or not an object (said elsewhere if it matters)
			}
		}
		names := make([]string, 0, len(obj))
		for name := range obj {
			if !slices.ContainsFunc(o.keys, func(k string) bool { return strings.EqualFold(k, name) }) {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		for _, name := range names {
			warnings = append(warnings, unknownKeyWarning(o.path, name, o.keys))
		}
	}
	return warnings
}

// unknownKeyWarning says that path.name is no setting, and which of known
// was probably meant.
func unknownKeyWarning(path, name string, known []string) string {
	msg := fmt.Sprintf("%s: %s.%s is not a known setting", HostFile, path, name)
	if near := nearest(name, known); near != "" {
		return msg + "; did you mean " + near + "?"
	}
	return msg + " (known: " + strings.Join(known, ", ") + ")"
}

// nearest returns the key of known closest to name by edit distance
// (case-insensitive), "" when none is close: at most 3 edits, or at most a
// third of name's length (a long name with a suffix added, such as
// servername_typo, is still near serverName).
func nearest(name string, known []string) string {
	best, bestDist := "", -1
	lower := strings.ToLower(name)
	for _, k := range known {
		d := levenshtein(lower, strings.ToLower(k))
		if bestDist < 0 || d < bestDist {
			best, bestDist = k, d
		}
	}
	if bestDist < 0 || (bestDist > 3 && 3*bestDist > len([]rune(name))) {
		return ""
	}
	return best
}

// levenshtein is the edit distance between a and b, in runes.
func levenshtein(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
