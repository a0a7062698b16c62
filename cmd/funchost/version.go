package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/funcmcp/funcmcp/host"
)

// versionLine says which funchost this is: the host version it reports to
// workers, the module version and commit it was built from, and the Go
// toolchain.
func versionLine() string {
	module, commit, dirty := "(unknown)", "", false
	if bi, ok := debug.ReadBuildInfo(); ok {
		module = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	line := fmt.Sprintf("funchost %s (module %s", host.Version, module)
	if commit != "" {
		if len(commit) > 12 {
			commit = commit[:12]
		}
		line += ", commit " + commit
		if dirty {
			line += " with local changes"
		}
	}
	return line + fmt.Sprintf(", %s %s/%s)", runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
