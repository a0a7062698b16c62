package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// listedPackage is the part of `go list -json` output the rules need.
type listedPackage struct {
	ImportPath string
	Standard   bool
	Module     *struct{ Path string }
	Imports    []string
	Deps       []string
}

// listPackages runs `go list -deps -json ./...` at the repository root and
// returns the packages of this module by import path.
func listPackages(t *testing.T) map[string]*listedPackage {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), buildTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "list", "-deps", "-json", "./...")
	cmd.Dir = ".."
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Run(), "go list: %s", stderr.String())
	pkgs := map[string]*listedPackage{}
	dec := json.NewDecoder(&stdout)
	for {
		var p listedPackage
		err := dec.Decode(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		if p.Module != nil && p.Module.Path == modulePath {
			pkgs[p.ImportPath] = &p
		}
	}
	require.NotEmpty(t, pkgs)
	return pkgs
}

// ours reports whether an import path is a package of this module.
func ours(path string) bool { return path == modulePath || strings.HasPrefix(path, modulePath+"/") }

// thirdParty reports whether an import path is outside this module and the
// standard library (its first element has a dot).
func thirdParty(path string) bool {
	return !ours(path) && strings.Contains(strings.SplitN(path, "/", 2)[0], ".")
}

// under reports whether path is the package dir of this module or below it.
func under(path, dir string) bool {
	p := modulePath + "/" + dir
	return path == p || strings.HasPrefix(path, p+"/")
}

// TestDependencyDirection checks the package rules of the design: metadata
// imports nothing of ours and only the standard library; binding only
// metadata (and jsonschema/v6); worker not host (nor azcore); nothing but
// cmd/ and tests/ imports host; the sample imports the worker only.
func TestDependencyDirection(t *testing.T) {
	pkgs := listPackages(t)
	for _, want := range []string{"metadata", "binding", "worker", "host", "cmd/funchost", "function-app-sample"} {
		require.Contains(t, pkgs, modulePath+"/"+want, "go list sees %s", want)
	}

	// allowed says which packages of ours a package (and its internal
	// packages) may depend on, directly or not.
	rules := []struct {
		dir     string
		allowed func(dep string) bool
		thirdOK func(dep string) bool // nil: any third-party module
	}{
		{dir: "metadata", allowed: func(dep string) bool { return under(dep, "metadata") },
			thirdOK: func(string) bool { return false }},
		{dir: "binding", allowed: func(dep string) bool { return under(dep, "binding") || under(dep, "metadata") },
			thirdOK: func(dep string) bool {
				return strings.HasPrefix(dep, "github.com/santhosh-tekuri/jsonschema/v6") || strings.HasPrefix(dep, "golang.org/x/text/")
			}},
		{dir: "worker", allowed: func(dep string) bool { return !under(dep, "host") && !under(dep, "cmd") && !under(dep, "tests") },
			thirdOK: func(dep string) bool { return !strings.HasPrefix(dep, "github.com/Azure/") }},
		{dir: "function-app-sample", allowed: func(dep string) bool {
			return !under(dep, "host") && !under(dep, "cmd") && !under(dep, "tests")
		}},
	}
	for _, r := range rules {
		t.Run(r.dir, func(t *testing.T) {
			var checked int
			for path, p := range pkgs {
				if !under(path, r.dir) {
					continue
				}
				checked++
				for _, dep := range p.Deps {
					switch {
					case ours(dep) && !r.allowed(dep):
						t.Errorf("%s depends on %s", path, dep)
					case thirdParty(dep) && r.thirdOK != nil && !r.thirdOK(dep):
						t.Errorf("%s depends on the third-party package %s", path, dep)
					}
				}
			}
			assert.NotZero(t, checked)
		})
	}

	t.Run("only cmd and tests import host", func(t *testing.T) {
		for path, p := range pkgs {
			if under(path, "host") || under(path, "cmd") || under(path, "tests") {
				continue
			}
			for _, dep := range p.Deps {
				if under(dep, "host") {
					t.Errorf("%s depends on %s", path, dep)
				}
			}
		}
	})

	t.Run("the sample imports only the worker of ours", func(t *testing.T) {
		p := pkgs[modulePath+"/function-app-sample"]
		var mine []string
		for _, imp := range p.Imports {
			if ours(imp) && !under(imp, "function-app-sample") {
				mine = append(mine, imp)
			}
		}
		slices.Sort(mine)
		assert.Equal(t, []string{modulePath + "/worker"}, mine)
	})
}
