package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
)

// funcmcpModule is the module path of funcmcp.
const funcmcpModule = "github.com/funcmcp/funcmcp"

// defaultGoVersion is the go line written when no funcmcp go.mod is at hand
// to copy it from: the go line of funcmcp's own go.mod (a test keeps them equal).
const defaultGoVersion = "1.26.0"

// replacedVersion is the version required of a module that a replace
// directive points to a folder (the one `go mod edit -replace` uses).
const replacedVersion = "v0.0.0-00010101000000-000000000000"

// source says where a new app takes the funcmcp module from.
type source struct {
	// Replace is the absolute path of a funcmcp checkout for a replace
	// directive; "" means the module is fetched at Version.
	Replace string
	// Version is the version go.mod requires.
	Version string
	// GoSum is a go.sum to start from: funcmcp's own, whose lines cover the
	// modules funcmcp needs, so that nothing must be looked up. "" for none.
	GoSum string
	// GoVersion is the go line of the new go.mod.
	GoVersion string
}

// describe says where the module comes from, for the console.
func (s source) describe() string {
	if s.Replace != "" {
		return "from " + s.Replace + " (replace directive)"
	}
	return "at " + s.Version
}

// SourceError reports that funchost new cannot tell where funcmcp comes from.
type SourceError struct {
	Reason string
}

func (e *SourceError) Error() string {
	return "finding the funcmcp module: " + e.Reason
}

// findSource decides where the funcmcp module comes from:
//
//  1. dir (the --funcmcp flag), which must be a funcmcp checkout: a replace
//     directive to it;
//  2. else the first of candidates (folders) inside a funcmcp checkout,
//     found by walking up to the nearest go.mod: a replace directive;
//  3. else buildVersion (the version funchost was built at, from its build
//     information), required as it is, when it is a module version.
//
// A copy in the module cache (a folder named funcmcp@<version>) is not a
// checkout: it only lends its go.sum when its version is the one required.
func findSource(dir string, candidates []string, buildVersion string) (source, error) {
	if dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return source{}, fmt.Errorf("finding the funcmcp module: %w", err)
		}
		mod, err := readGoMod(filepath.Join(abs, "go.mod"))
		if err != nil {
			return source{}, &SourceError{Reason: fmt.Sprintf("--funcmcp %s: %v", dir, err)}
		}
		if mod.module != funcmcpModule {
			return source{}, &SourceError{Reason: fmt.Sprintf("--funcmcp %s: its go.mod is module %q, not %s", dir, mod.module, funcmcpModule)}
		}
		return checkoutSource(abs, mod), nil
	}
	var cached []string // module cache copies of funcmcp
	for _, c := range candidates {
		if c == "" {
			continue
		}
		root, mod, ok := nearestModule(c)
		if !ok || mod.module != funcmcpModule {
			continue
		}
		if strings.Contains(filepath.Base(root), "@") {
			cached = append(cached, root)
			continue
		}
		return checkoutSource(root, mod), nil
	}
	if !usableVersion(buildVersion) {
		return source{}, &SourceError{Reason: fmt.Sprintf("funchost was not run from a funcmcp checkout, and it was built without a module version (%q): "+
			"pass --funcmcp DIR with the folder of a funcmcp checkout, or install funchost with go install %s/cmd/funchost@VERSION",
			buildVersion, funcmcpModule)}
	}
	s := source{Version: buildVersion, GoVersion: defaultGoVersion}
	for _, root := range cached {
		if filepath.Base(root) != "funcmcp@"+buildVersion {
			continue
		}
		if mod, err := readGoMod(filepath.Join(root, "go.mod")); err == nil && mod.goVersion != "" {
			s.GoVersion = mod.goVersion
		}
		if _, err := os.Stat(filepath.Join(root, "go.sum")); err == nil {
			s.GoSum = filepath.Join(root, "go.sum")
		}
	}
	return s, nil
}

func checkoutSource(root string, mod goMod) source {
	s := source{Replace: root, Version: replacedVersion, GoVersion: mod.goVersion}
	if s.GoVersion == "" {
		s.GoVersion = defaultGoVersion
	}
	if _, err := os.Stat(filepath.Join(root, "go.sum")); err == nil {
		s.GoSum = filepath.Join(root, "go.sum")
	}
	return s
}

// usableVersion reports whether v can be required from a module proxy: a
// semantic version, not "(devel)" and not a build of modified sources.
func usableVersion(v string) bool {
	return strings.HasPrefix(v, "v") && !strings.Contains(v, "+") && !strings.ContainsAny(v, " ()")
}

// candidateDirs are the folders to look for a funcmcp checkout from: the
// folder of funchost's own source (known unless it was built with
// -trimpath), then the working directory.
func candidateDirs() []string {
	var dirs []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		dirs = append(dirs, filepath.Dir(file))
	}
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, wd)
	}
	return dirs
}

// buildVersion is the version of the funcmcp module funchost was built from,
// "" when unknown.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Path != funcmcpModule {
		return ""
	}
	return info.Main.Version
}

// goMod is what funchost reads of a go.mod.
type goMod struct {
	module    string
	goVersion string
}

// nearestModule walks up from dir to the nearest folder holding a go.mod.
func nearestModule(dir string) (root string, mod goMod, ok bool) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", goMod{}, false
	}
	for {
		m, err := readGoMod(filepath.Join(dir, "go.mod"))
		if err == nil {
			return dir, m, true
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", goMod{}, false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", goMod{}, false
		}
		dir = parent
	}
}

// readGoMod reads the module and go lines of a go.mod file.
func readGoMod(file string) (goMod, error) {
	f, err := os.Open(file)
	if err != nil {
		return goMod{}, err
	}
	defer f.Close()
	var m goMod
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		fields := strings.Fields(line)
		if len(fields) != 2 {
			continue
		}
		switch fields[0] {
		case "module":
			m.module = unquote(fields[1])
		case "go":
			m.goVersion = fields[1]
		}
	}
	if err := sc.Err(); err != nil {
		return goMod{}, fmt.Errorf("reading %s: %w", file, err)
	}
	if m.module == "" {
		return goMod{}, fmt.Errorf("reading %s: no module line", file)
	}
	return m, nil
}

func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}
