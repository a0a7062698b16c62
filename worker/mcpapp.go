package worker

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/funcmcp/funcmcp/metadata"
)

// An MCP App (SEP-1865) is a tool with a UI view: an HTML page the client
// shows in a sandboxed frame. As in the Azure Functions MCP extension's
// worker (McpToolBuilder.AsMcpApp), the tool is advertised with
// _meta.ui {"resourceUri":"ui://<tool>/view","visibility":[…]} and a
// resource function named "functions--mcpapp-<tool>" serves the view at
// that URI with the MIME type text/html;profile=mcp-app; the worker answers
// it itself, with the view's CSP, permissions, border and domain in the
// contents' _meta.ui.

// Visibility says who may call an MCP App tool: the model, the app (the
// view), or both ([VisibilityModel]|[VisibilityApp], the default).
type Visibility int

// The visibility flags.
const (
	VisibilityModel Visibility = 1 << iota
	VisibilityApp
)

// AppPermissions are the permissions a view asks for.
type AppPermissions int

// The permission flags.
const (
	PermissionClipboardRead AppPermissions = 1 << iota
	PermissionClipboardWrite
)

// ViewSource is where a view's HTML comes from: [ViewFromFS],
// [ViewFromFile] or [ViewFromHTML]. The zero value is no source.
type ViewSource struct {
	fsys fs.FS
	path string // in fsys, or a file path when fsys is nil
	html *string
}

// ViewFromFS reads the view from name in fsys, for example an embed.FS.
func ViewFromFS(fsys fs.FS, name string) ViewSource { return ViewSource{fsys: fsys, path: name} }

// ViewFromFile reads the view from a file at every request. A relative
// path is resolved against the app folder: Options.ScriptRoot, else
// $FUNCTIONS_APP_ROOT_PATH (which the Functions host sets), else the
// current directory. The server refuses to start when the file is missing.
func ViewFromFile(path string) ViewSource { return ViewSource{path: path} }

// ViewFromHTML serves html as the view.
func ViewFromHTML(html string) ViewSource { return ViewSource{html: &html} }

// read returns the view's HTML; root is the app folder for relative files.
func (s ViewSource) read(root string) (string, error) {
	switch {
	case s.html != nil:
		return *s.html, nil
	case s.fsys != nil:
		data, err := fs.ReadFile(s.fsys, s.path)
		return string(data), err
	default:
		data, err := os.ReadFile(s.file(root))
		return string(data), err
	}
}

// file returns the path of a file source.
func (s ViewSource) file(root string) string {
	if filepath.IsAbs(s.path) {
		return s.path
	}
	return filepath.Join(root, s.path)
}

// check reports what is wrong with a source at build time (a file source is
// checked when the server starts).
func (s ViewSource) check() error {
	switch {
	case s.html != nil:
		if strings.TrimSpace(*s.html) == "" {
			return errors.New("the view's HTML is empty")
		}
	case s.fsys != nil:
		st, err := fs.Stat(s.fsys, s.path)
		if err != nil {
			return fmt.Errorf("the view %q: %w", s.path, err)
		}
		if st.IsDir() {
			return fmt.Errorf("the view %q is a directory", s.path)
		}
	case strings.TrimSpace(s.path) == "":
		return errors.New("the view has no source: use ViewFromFS, ViewFromFile or ViewFromHTML")
	}
	return nil
}

// StaticAssetOptions are the options of [AppBuilder.WithStaticAssets].
type StaticAssetOptions struct {
	// IncludeSourceMaps allows .map files.
	IncludeSourceMaps bool
}

// appConfig is an MCP App's configuration.
type appConfig struct {
	view       *viewConfig
	assetsDir  *string
	assets     *StaticAssetOptions
	visibility Visibility
	errs       []error
}

type viewConfig struct {
	source      ViewSource
	title       string
	border      *bool
	domain      string
	csp         *cspConfig
	permissions AppPermissions
}

type cspConfig struct {
	connect, resource, frame, baseURI []string
}

// AppBuilder configures an MCP App (see [ToolBuilder.AsMcpApp]).
type AppBuilder struct{ cfg *appConfig }

// ViewBuilder configures an MCP App's view.
type ViewBuilder struct {
	app  *AppBuilder
	view *viewConfig
}

// CSPBuilder configures a view's Content Security Policy: the origins it
// may reach besides its own.
type CSPBuilder struct {
	csp  *cspConfig
	errs *[]error
}

// AsMcpApp makes the tool an MCP App: configure sets its view (required)
// and options. Calls accumulate; the last view set wins.
//
//	app.ConfigureMcpTool("bar_chart").AsMcpApp(func(a *worker.AppBuilder) {
//		a.WithView(worker.ViewFromFS(views, "view/chart.html")).WithTitle("Bar chart").WithBorder(true)
//	})
func (b *ToolBuilder) AsMcpApp(configure func(app *AppBuilder)) *ToolBuilder {
	if configure == nil {
		b.errs = append(b.errs, ruleErr(ErrApp, "%v: AsMcpApp was given a nil function", ErrApp))
		return b
	}
	if b.mcpApp == nil {
		b.mcpApp = &appConfig{visibility: VisibilityModel | VisibilityApp}
	}
	configure(&AppBuilder{cfg: b.mcpApp})
	return b
}

func (a *AppBuilder) fail(format string, args ...any) {
	a.cfg.errs = append(a.cfg.errs, ruleErr(ErrApp, "%v: "+format, append([]any{ErrApp}, args...)...))
}

// WithView sets the view's source and returns its builder.
func (a *AppBuilder) WithView(source ViewSource) *ViewBuilder {
	v := &viewConfig{source: source}
	a.cfg.view = v
	return &ViewBuilder{app: a, view: v}
}

// WithStaticAssets records a folder of static assets for the view (opts
// nil means the defaults). As in the Azure Functions MCP extension (1.6),
// which records and checks it but serves nothing from it, no function is
// emitted and nothing is served: inline the assets in the view, or load
// them from origins the CSP allows ([CSPBuilder.LoadResourcesFrom]).
func (a *AppBuilder) WithStaticAssets(dir string, opts *StaticAssetOptions) *AppBuilder {
	if strings.TrimSpace(dir) == "" {
		a.fail("WithStaticAssets was given an empty directory")
		return a
	}
	a.cfg.assetsDir = &dir
	if opts != nil {
		o := *opts
		a.cfg.assets = &o
	}
	return a
}

// WithVisibility sets who may call the tool; the last call wins.
func (a *AppBuilder) WithVisibility(v Visibility) *AppBuilder {
	a.cfg.visibility = v
	return a
}

// WithTitle sets the view's title, written as the view resource's title.
func (v *ViewBuilder) WithTitle(title string) *ViewBuilder {
	if strings.TrimSpace(title) == "" {
		v.app.fail("the view title is empty")
		return v
	}
	v.view.title = title
	return v
}

// WithBorder says whether the client should draw a border around the view
// (prefersBorder); without a call the client decides.
func (v *ViewBuilder) WithBorder(border bool) *ViewBuilder {
	v.view.border = &border
	return v
}

// WithDomain sets the view's domain hint (for cookies and storage).
func (v *ViewBuilder) WithDomain(domain string) *ViewBuilder {
	if strings.TrimSpace(domain) == "" {
		v.app.fail("the view domain is empty")
		return v
	}
	v.view.domain = domain
	return v
}

// WithCSP configures the view's Content Security Policy; calls accumulate.
func (v *ViewBuilder) WithCSP(configure func(csp *CSPBuilder)) *ViewBuilder {
	if configure == nil {
		v.app.fail("WithCSP was given a nil function")
		return v
	}
	if v.view.csp == nil {
		v.view.csp = &cspConfig{}
	}
	configure(&CSPBuilder{csp: v.view.csp, errs: &v.app.cfg.errs})
	return v
}

// WithPermissions sets the permissions the view asks for.
func (v *ViewBuilder) WithPermissions(p AppPermissions) *ViewBuilder {
	v.view.permissions = p
	return v
}

// App returns to the app's builder.
func (v *ViewBuilder) App() *AppBuilder { return v.app }

func (c *CSPBuilder) add(list *[]string, origin string) *CSPBuilder {
	if strings.TrimSpace(origin) == "" {
		*c.errs = append(*c.errs, ruleErr(ErrApp, "%v: a CSP origin is empty", ErrApp))
		return c
	}
	*list = append(*list, origin)
	return c
}

// ConnectTo allows network requests (fetch, XHR, WebSocket) to origin
// (connectDomains, CSP connect-src).
func (c *CSPBuilder) ConnectTo(origin string) *CSPBuilder { return c.add(&c.csp.connect, origin) }

// LoadResourcesFrom allows scripts, images, styles, fonts and media from
// origin (resourceDomains).
func (c *CSPBuilder) LoadResourcesFrom(origin string) *CSPBuilder {
	return c.add(&c.csp.resource, origin)
}

// AllowFrame allows nested frames from origin (frameDomains, frame-src).
func (c *CSPBuilder) AllowFrame(origin string) *CSPBuilder { return c.add(&c.csp.frame, origin) }

// AllowBaseURI allows origin as the document's base URI (baseUriDomains,
// base-uri).
func (c *CSPBuilder) AllowBaseURI(origin string) *CSPBuilder { return c.add(&c.csp.baseURI, origin) }

// problems returns the app's configuration problems.
func (c *appConfig) problems() []error {
	errs := append([]error(nil), c.errs...)
	if c.view == nil {
		errs = append(errs, ruleErr(ErrApp, "%v: the app has no view: call WithView", ErrApp))
	} else if err := c.view.source.check(); err != nil {
		errs = append(errs, ruleErr(ErrApp, "%v: %v", ErrApp, err))
	}
	return errs
}

// toolUI returns the tool's _meta.ui: {"resourceUri","visibility"}.
func (c *appConfig) toolUI(toolName string) []byte {
	visibility := []string{}
	if c.visibility&VisibilityModel != 0 {
		visibility = append(visibility, "model")
	}
	if c.visibility&VisibilityApp != 0 {
		visibility = append(visibility, "app")
	}
	data, _ := metadata.Marshal(struct {
		ResourceURI string   `json:"resourceUri"`
		Visibility  []string `json:"visibility"`
	}{metadata.AppViewURI(toolName), visibility})
	return data
}

// resourceMeta returns the view contents' _meta, {"ui":{"csp"?,
// "permissions"?,"prefersBorder"?,"domain"?}}, or nil when there is
// nothing to say (as the extension's McpAppFunctions.BuildResourceUiMeta).
func (v *viewConfig) resourceMeta() []byte {
	type csp struct {
		Connect  []string `json:"connectDomains,omitempty"`
		Resource []string `json:"resourceDomains,omitempty"`
		Frame    []string `json:"frameDomains,omitempty"`
		BaseURI  []string `json:"baseUriDomains,omitempty"`
	}
	type permissions struct {
		ClipboardRead  *struct{} `json:"clipboardRead,omitempty"`
		ClipboardWrite *struct{} `json:"clipboardWrite,omitempty"`
	}
	type ui struct {
		CSP           *csp         `json:"csp,omitempty"`
		Permissions   *permissions `json:"permissions,omitempty"`
		PrefersBorder *bool        `json:"prefersBorder,omitempty"`
		Domain        string       `json:"domain,omitempty"`
	}
	var u ui
	if v.csp != nil {
		u.CSP = &csp{v.csp.connect, v.csp.resource, v.csp.frame, v.csp.baseURI}
	}
	if v.permissions != 0 {
		u.Permissions = &permissions{}
		if v.permissions&PermissionClipboardRead != 0 {
			u.Permissions.ClipboardRead = &struct{}{}
		}
		if v.permissions&PermissionClipboardWrite != 0 {
			u.Permissions.ClipboardWrite = &struct{}{}
		}
	}
	u.PrefersBorder, u.Domain = v.border, v.domain
	if u.CSP == nil && u.Permissions == nil && u.PrefersBorder == nil && u.Domain == "" {
		return nil
	}
	data, _ := metadata.Marshal(struct {
		UI ui `json:"ui"`
	}{u})
	return data
}

// viewContents returns the contents the view function serves.
func (v *viewConfig) viewContents(toolName, root string) (metadata.ResourceContents, error) {
	html, err := v.source.read(root)
	if err != nil {
		return metadata.ResourceContents{}, fmt.Errorf("reading the view of MCP App tool %q: %w", toolName, err)
	}
	return metadata.ResourceContents{
		URI: metadata.AppViewURI(toolName), MimeType: metadata.AppViewMimeType, Text: &html, Meta: v.resourceMeta(),
	}, nil
}

// appRoot is the folder relative view files are read from.
func (a *App) appRoot() string { return cmp.Or(a.scriptRoot, os.Getenv(metadata.EnvAppRootPath), ".") }
