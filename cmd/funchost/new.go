package main

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/template"
)

// The files of a new app, one template each (see appFiles for their names).
//
//go:embed newapp/*.tmpl
var newAppFS embed.FS

const newUsage = `Usage:
  funchost new [flags] DIR

new writes a ready function app into DIR (created if missing; it must be
empty unless --force is given): go.mod, main.go with one typed tool, its
test, host.json, local.settings.json, .gitignore and a Makefile whose
"run" target builds the app folder dist/ and serves it with funchost.
With a funcmcp checkout, go.mod lists the modules the checkout builds its
worker and funchost with, and go.sum is the checkout's: nothing is looked
up that building funcmcp did not download. Without one, it runs go get.
Next:

  make -C DIR run

Flags of new:
`

// newOptions are the flags of funchost new.
type newOptions struct {
	dir     string
	module  string
	funcmcp string
	force   bool
}

// runNew is `funchost new`; it returns the exit code.
func runNew(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("funchost new", flag.ContinueOnError)
	flags.SetOutput(stderr)
	var o newOptions
	flags.StringVar(&o.module, "module", "", "the module path of the app (default: the name of DIR, made a valid module path)")
	flags.StringVar(&o.funcmcp, "funcmcp", "", "a funcmcp checkout to use through a replace directive (default: the checkout funchost runs from, else the version it was built at)")
	flags.BoolVar(&o.force, "force", false, "write into a DIR that is not empty, replacing the files of the same names")
	flags.Usage = func() {
		fmt.Fprint(flags.Output(), newUsage)
		flags.PrintDefaults()
	}
	// Flags may come before or after DIR.
	var dirs []string
	for {
		if err := flags.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			return 2
		}
		if flags.NArg() == 0 {
			break
		}
		dirs = append(dirs, flags.Arg(0))
		args = flags.Args()[1:]
	}
	if len(dirs) != 1 {
		fmt.Fprintf(stderr, "funchost new: need exactly one DIR, got %d: %q\n\n", len(dirs), dirs)
		flags.Usage()
		return 2
	}
	o.dir = dirs[0]

	list := func(checkout string) ([]module, error) {
		return listRequirements(ctx, checkout, stdout, stderr)
	}
	plan, err := planApp(o, candidateDirs(), buildVersion(), list)
	if err != nil {
		fmt.Fprintf(stderr, "funchost new: %v\n", err)
		return 1
	}
	if err := plan.write(stdout); err != nil {
		fmt.Fprintf(stderr, "funchost new: %v\n", err)
		return 1
	}
	if err := plan.addRequirements(ctx, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "funchost new: %v\n", err)
		fmt.Fprintf(stderr, "funchost new: the files are written; once the problem is solved, run in %s:\n  %s\n", o.dir, strings.Join(plan.goGet(), " "))
		return 1
	}
	fmt.Fprintf(stdout, "\nDone. Build the app and serve it on http://127.0.0.1:7071/runtime/webhooks/mcp with:\n\n  make -C %s run\n", shellQuote(o.dir))
	return 0
}

// appData is what the templates of a new app see.
type appData struct {
	Module    string // module path
	Name      string // a short name: serverName in host.json
	GoVersion string // go line of go.mod
	Version   string // the funcmcp version required
	Replace   string // the funcmcp checkout, "" when none
	// Requires are the modules besides funcmcp that go.mod requires
	// (indirect): with a checkout, the ones its worker and funchost build
	// with; none otherwise (go get adds them).
	Requires []module
}

// module is one module requirement.
type module struct {
	Path, Version string
}

// appPlan is a new app: where it goes and what it holds.
type appPlan struct {
	dir    string // as the user wrote it
	abs    string
	data   appData
	source source
	files  []appFile
}

// appFile is one file of a new app.
type appFile struct {
	name string // relative to the app folder, slash-separated
	data []byte
}

// NotEmptyError reports that funchost new was asked to write into a folder
// that already holds something, without --force.
type NotEmptyError struct {
	Dir     string
	Entries []string // the first few entries found
}

func (e *NotEmptyError) Error() string {
	return fmt.Sprintf("%s is not empty (it holds %s): choose a new or empty folder, or pass --force to write into it, replacing files of the same names",
		e.Dir, strings.Join(e.Entries, ", "))
}

// planApp checks the options, finds funcmcp and renders every file; it
// writes nothing. With a checkout, requirements lists the modules go.mod
// requires besides funcmcp.
func planApp(o newOptions, candidates []string, version string, requirements func(checkout string) ([]module, error)) (*appPlan, error) {
	abs, err := filepath.Abs(o.dir)
	if err != nil {
		return nil, fmt.Errorf("resolving %s: %w", o.dir, err)
	}
	if err := checkTarget(o.dir, abs, o.force); err != nil {
		return nil, err
	}
	module := o.module
	if module == "" {
		module = moduleFromDir(abs)
	}
	if err := checkModulePath(module); err != nil {
		return nil, err
	}
	src, err := findSource(o.funcmcp, candidates, version)
	if err != nil {
		return nil, err
	}
	p := &appPlan{dir: o.dir, abs: abs, source: src, data: appData{
		Module:    module,
		Name:      appName(module),
		GoVersion: src.GoVersion,
		Version:   src.Version,
		Replace:   src.Replace,
	}}
	if src.Replace != "" {
		if p.data.Requires, err = requirements(src.Replace); err != nil {
			return nil, err
		}
	}
	p.files, err = renderApp(p.data)
	if err != nil {
		return nil, err
	}
	if src.GoSum != "" {
		sum, err := os.ReadFile(src.GoSum)
		if err != nil {
			return nil, fmt.Errorf("reading funcmcp's go.sum: %w", err)
		}
		p.files = append(p.files, appFile{name: "go.sum", data: sum})
	}
	sort.Slice(p.files, func(i, j int) bool { return p.files[i].name < p.files[j].name })
	return p, nil
}

// checkTarget refuses a path that is not a folder, and a folder that is not
// empty unless force is set.
func checkTarget(dir, abs string, force bool) error {
	st, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("checking %s: %w", dir, err)
	case !st.IsDir():
		return fmt.Errorf("%s exists and is not a folder", dir)
	case force:
		return nil
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return fmt.Errorf("reading %s: %w", dir, err)
	}
	if len(entries) == 0 {
		return nil
	}
	e := &NotEmptyError{Dir: dir}
	for i, entry := range entries {
		if i == 3 {
			e.Entries = append(e.Entries, fmt.Sprintf("and %d more", len(entries)-i))
			break
		}
		e.Entries = append(e.Entries, entry.Name())
	}
	return e
}

// appFiles maps each template to the file it becomes.
var appFiles = map[string]string{
	"go.mod.tmpl":              "go.mod",
	"main.go.tmpl":             "main.go",
	"main_test.go.tmpl":        "main_test.go",
	"host.json.tmpl":           "host.json",
	"local.settings.json.tmpl": "local.settings.json",
	"gitignore.tmpl":           ".gitignore",
	"Makefile.tmpl":            "Makefile",
}

var templateFuncs = template.FuncMap{
	// json writes a JSON string.
	"json": func(s string) (string, error) {
		b, err := json.Marshal(s)
		return string(b), err
	},
	// modPath writes a file path as go.mod needs it: quoted when it holds
	// anything but plain characters.
	"modPath": func(s string) string {
		if plainPath.MatchString(s) {
			return s
		}
		return strconv.Quote(s)
	},
}

var plainPath = regexp.MustCompile(`^[A-Za-z0-9_./\\:+~@-]+$`)

// renderApp renders every template. Go files are formatted with go/format.
func renderApp(data appData) ([]appFile, error) {
	var files []appFile
	for name, file := range appFiles {
		out, err := renderTemplate(name, data)
		if err != nil {
			return nil, err
		}
		if strings.HasSuffix(file, ".go") {
			if out, err = format.Source(out); err != nil {
				return nil, fmt.Errorf("formatting %s: %w", file, err)
			}
		}
		files = append(files, appFile{name: file, data: out})
	}
	return files, nil
}

// renderTemplate renders one template of newapp/.
func renderTemplate(name string, data appData) ([]byte, error) {
	text, err := newAppFS.ReadFile("newapp/" + name)
	if err != nil {
		return nil, fmt.Errorf("reading template %s: %w", name, err)
	}
	tmpl, err := template.New(name).Funcs(templateFuncs).Option("missingkey=error").Parse(string(text))
	if err != nil {
		return nil, fmt.Errorf("parsing template %s: %w", name, err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, data); err != nil {
		return nil, fmt.Errorf("rendering template %s: %w", name, err)
	}
	return buf.Bytes(), nil
}

// write writes the files, listing each on w.
func (p *appPlan) write(w io.Writer) error {
	if err := os.MkdirAll(p.abs, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", p.dir, err)
	}
	fmt.Fprintf(w, "Writing %s (module %s), with %s %s:\n", p.dir, p.data.Module, funcmcpModule, p.source.describe())
	for _, f := range p.files {
		file := filepath.Join(p.abs, filepath.FromSlash(f.name))
		note := ""
		if _, err := os.Lstat(file); err == nil {
			note = " (replaced)"
		}
		if err := os.WriteFile(file, f.data, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", file, err)
		}
		fmt.Fprintf(w, "  %s%s\n", filepath.Join(p.dir, filepath.FromSlash(f.name)), note)
	}
	return nil
}

// newAppPackages are the funcmcp packages a new app builds: its worker
// library, funcmcptest (its test calls a tool through MCP) and the
// funchost tool.
var newAppPackages = []string{funcmcpModule + "/worker", funcmcpModule + "/funcmcptest", funcmcpModule + "/cmd/funchost"}

// RequirementsError reports that the modules a funcmcp checkout builds its
// worker and funchost with could not be listed.
type RequirementsError struct {
	Checkout string
	Err      error
}

func (e *RequirementsError) Error() string {
	return fmt.Sprintf("listing the modules %s builds %s with: %v (the go command downloads what the module cache lacks through GOPROXY; offline, build funcmcp once where the network is at hand)",
		e.Checkout, strings.Join(newAppPackages[:len(newAppPackages)-1], ", ")+" and "+newAppPackages[len(newAppPackages)-1], e.Err)
}

func (e *RequirementsError) Unwrap() error { return e.Err }

// listRequirements lists, with go list -deps in a funcmcp checkout, the
// modules that provide the packages of its worker and funchost. They are
// exactly the requirements go get would write, found without loading the
// whole module graph: go get reads the go.mod of every module in it
// (golang.org/x/sys@v0.1.0's, for one, that a dependency of a dependency
// names), which building funcmcp never downloads. The go command runs with
// the user's settings, so what the module cache lacks comes through
// GOPROXY, and nothing is looked up when it holds everything.
func listRequirements(ctx context.Context, checkout string, stdout, stderr io.Writer) ([]module, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return nil, &RequirementsError{Checkout: checkout, Err: fmt.Errorf("finding the go command: %w", err)}
	}
	args := append([]string{"list", "-deps", "-f", "{{with .Module}}{{if .Version}}{{.Path}} {{.Version}}{{end}}{{end}}"}, "./worker", "./funcmcptest", "./cmd/funchost")
	fmt.Fprintf(stdout, "Listing the modules funcmcp's worker and funchost build with (in %s):\n  go %s\n", checkout, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, goCmd, args...)
	cmd.Dir = checkout
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, stderr
	if err := cmd.Run(); err != nil {
		return nil, &RequirementsError{Checkout: checkout, Err: fmt.Errorf("running go list: %w", err)}
	}
	seen := map[module]bool{}
	var mods []module
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 || seen[module{f[0], f[1]}] {
			continue
		}
		seen[module{f[0], f[1]}] = true
		mods = append(mods, module{f[0], f[1]})
	}
	sort.Slice(mods, func(i, j int) bool { return mods[i].Path < mods[j].Path })
	return mods, nil
}

// goGet is the command that completes go.mod and go.sum when funcmcp is
// required at a version (no checkout). Unlike go mod tidy, go get loads
// only what the app and funchost build, not the tests of every dependency.
func (p *appPlan) goGet() []string {
	cmd := []string{"go", "get"}
	for _, pkg := range newAppPackages {
		cmd = append(cmd, pkg+"@"+p.data.Version)
	}
	return cmd
}

// addRequirements runs goGet in the app folder when funcmcp is required at
// a version, its output shown on stdout and stderr, with the user's own
// GOPROXY. With a checkout, go.mod and go.sum are complete as written.
func (p *appPlan) addRequirements(ctx context.Context, stdout, stderr io.Writer) error {
	if p.source.Replace != "" {
		return nil
	}
	args := p.goGet()
	fmt.Fprintf(stdout, "Adding the requirements to go.mod and go.sum:\n  %s\n", strings.Join(args, " "))
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("finding the go command: %w", err)
	}
	cmd := exec.CommandContext(ctx, goCmd, args[1:]...)
	cmd.Dir = p.abs
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("running %s in %s: %w", strings.Join(args, " "), p.dir, err)
	}
	return nil
}

// moduleFromDir makes a module path of a folder's name: lower case, any run
// of dashes and characters outside [a-z0-9._~] a dash, no dot, dash or underscore at
// either end; "app" when nothing is left.
func moduleFromDir(abs string) string {
	name := strings.ToLower(filepath.Base(abs))
	var b strings.Builder
	dash := false
	for _, r := range name {
		if r < 0x80 && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || strings.ContainsRune("._~", r)) {
			b.WriteRune(r)
			dash = false
			continue
		}
		if !dash {
			b.WriteByte('-')
			dash = true
		}
	}
	m := strings.Trim(b.String(), ".-_~")
	if m == "" {
		return "app"
	}
	return m
}

// checkModulePath checks a module path with the rules of the go command's
// module paths: slash-separated elements of letters, digits and "-._~",
// none empty, none starting or ending with a dot.
func checkModulePath(m string) error {
	bad := func(reason string) error {
		return fmt.Errorf("module path %q is not valid: %s", m, reason)
	}
	if m == funcmcpModule || strings.HasPrefix(m, funcmcpModule+"/") {
		return bad("it is funcmcp's own")
	}
	if m == "" {
		return bad("it is empty")
	}
	for _, elem := range strings.Split(m, "/") {
		switch {
		case elem == "":
			return bad("an element is empty")
		case strings.HasPrefix(elem, ".") || strings.HasSuffix(elem, "."):
			return bad(fmt.Sprintf("element %q starts or ends with a dot", elem))
		}
		for _, r := range elem {
			if !(r < 0x80 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-._~", r))) {
				return bad(fmt.Sprintf("%q is not allowed (letters, digits and -._~ only)", r))
			}
		}
	}
	return nil
}

// appName is a module path's last element, or the one before a major
// version suffix (example.com/tools/v2 → tools).
func appName(module string) string {
	name := path.Base(module)
	if majorSuffix.MatchString(name) && path.Dir(module) != "." {
		name = path.Base(path.Dir(module))
	}
	return name
}

var majorSuffix = regexp.MustCompile(`^v[0-9]+$`)

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && plainArg.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

var plainArg = regexp.MustCompile(`^[A-Za-z0-9_./:+@%=,-]+$`)
