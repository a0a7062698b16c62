package worker

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/funcmcp/funcmcp/metadata"
)

// ResourceHandler reads a resource: it returns the contents of rc.URI. A
// nil result is a read with no contents. An error fails the read: the MCP
// client gets a JSON-RPC error with its message (code -32002 when it wraps
// [ErrResourceNotFound], else -32603).
//
//docs:begin handler
type ResourceHandler func(ctx context.Context, rc *ResourceContext) (*ResourceResult, error)

//docs:end handler

// ErrResourceNotFound, wrapped in a handler's error, says the requested
// resource does not exist (JSON-RPC -32002 under funchost).
var ErrResourceNotFound = errors.New("resource not found")

// ResourceContext is one resources/read of a resource or resource template.
type ResourceContext struct {
	// URI is the URI the client asked for, template variables filled in.
	URI string
	// Variables are the template's variables and their values in URI, as
	// they appear there (not percent-decoded); nil for a static resource.
	Variables map[string]string
	// SessionID is the MCP session id ("" when none).
	SessionID string
	// ClientInfo is the MCP client's implementation info (nil when unknown).
	ClientInfo *metadata.ClientInfo
	// Transport says how the request reached the host (nil when unknown).
	Transport *metadata.Transport
	// InvocationID is the host's invocation id (X-Azure-Functions-InvocationId).
	InvocationID string
	// FunctionName is the function (folder) name the host invoked.
	FunctionName string

	logBook
}

// Variable returns the value of a template variable ("" when there is none).
func (rc *ResourceContext) Variable(name string) string { return rc.Variables[name] }

// Header returns a header of the client's request, when the host forwarded
// it (matched case-insensitively).
func (rc *ResourceContext) Header(name string) (string, bool) { return rc.Transport.Header(name) }

// ResourceResult is the contents of one resource read: text, or binary
// data when Blob is not nil. The Azure Functions MCP extension returns
// exactly one contents item per read.
type ResourceResult struct {
	// Text is the text of a text resource.
	Text string
	// Blob, when not nil, makes the contents binary (sent base64-encoded);
	// Text is then ignored.
	Blob []byte
	// MimeType is the contents' MIME type; "" means the resource's.
	MimeType string
	// URI is the contents' URI; "" means the URI the client asked for.
	URI string
	// Meta, when not nil, is sent as the contents' _meta.
	Meta map[string]any
}

// TextResource returns text contents.
func TextResource(text string) *ResourceResult { return &ResourceResult{Text: text} }

// BlobResource returns binary contents (data may be empty, never nil).
func BlobResource(data []byte) *ResourceResult {
	if data == nil {
		data = []byte{}
	}
	return &ResourceResult{Blob: data}
}

// contents turns r into the contents item the worker sends.
func (r *ResourceResult) contents(requested, mimeType string) (metadata.ResourceContents, error) {
	c := metadata.ResourceContents{URI: cmp.Or(r.URI, requested), MimeType: cmp.Or(r.MimeType, mimeType)}
	if r.Blob != nil {
		b := base64.StdEncoding.EncodeToString(r.Blob)
		c.Blob = &b
	} else {
		text := r.Text
		c.Text = &text
	}
	if r.Meta != nil {
		meta, err := metadata.Marshal(r.Meta)
		if err != nil {
			return c, fmt.Errorf("encoding _meta: %w", err)
		}
		c.Meta = meta
	}
	return c, nil
}

// ResourceBuilder configures one resource or resource template. Its methods
// only record: every problem is reported by [App.Build]. Calls for the same
// URI accumulate on the same builder; for single values the last call wins,
// metadata keys overwrite in place.
//
// A ResourceBuilder is not safe for concurrent use.
type ResourceBuilder struct {
	uri          string
	name         string
	title        string
	description  string
	mimeType     string
	size         *int64
	functionName string
	metadata     []metadata.Field
	icons        []metadata.Icon
	completions  completionSet
	handler      ResourceHandler
	handlers     int
	errs         []error
	scopes       []string // WithRequiredScopes
}

// ConfigureMcpResource returns the builder of the resource whose URI is uri
// (matched exactly), creating it on first use. A URI with {variable}
// expressions ("test://items/{id}") makes a resource template: a read of
// any URI it matches reaches the handler, with the variables' values.
func (a *App) ConfigureMcpResource(uri string) *ResourceBuilder {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, b := range a.resources {
		if b.uri == uri {
			return b
		}
	}
	b := &ResourceBuilder{uri: uri}
	a.resources = append(a.resources, b)
	return b
}

// URI returns the resource's URI or URI template.
func (b *ResourceBuilder) URI() string { return b.uri }

// WithName sets the resource's name (resourceName); the default is the
// function name.
func (b *ResourceBuilder) WithName(name string) *ResourceBuilder { b.name = name; return b }

// WithTitle sets the resource's display title.
func (b *ResourceBuilder) WithTitle(title string) *ResourceBuilder { b.title = title; return b }

// WithDescription sets the resource's description.
func (b *ResourceBuilder) WithDescription(description string) *ResourceBuilder {
	b.description = description
	return b
}

// WithMimeType sets the MIME type of the resource's contents.
func (b *ResourceBuilder) WithMimeType(mimeType string) *ResourceBuilder {
	b.mimeType = mimeType
	return b
}

// WithSize sets the resource's size in bytes, advertised in resources/list
// (templates are listed without one).
func (b *ResourceBuilder) WithSize(size int64) *ResourceBuilder { b.size = &size; return b }

// The setters below repeat PromptBuilder's (and ToolBuilder's) on purpose:
// each returns its own builder, so that calls chain, and a Go method cannot
// return the type that embeds it. What they do is shared (setMetadata,
// completionSet); only the one-line bodies repeat.

// WithFunctionName sets the function folder name. The default is made from
// the URI: lower case, every run of other characters than letters and
// digits replaced by "_" ("test://static-text" → "test_static_text").
func (b *ResourceBuilder) WithFunctionName(name string) *ResourceBuilder {
	b.functionName = name
	return b
}

// WithMetadata sets a metadata entry (advertised as the resource's _meta),
// as [ToolBuilder.WithMetadata] does.
func (b *ResourceBuilder) WithMetadata(key string, value any) *ResourceBuilder {
	b.metadata, b.errs = setMetadata(b.metadata, b.errs, key, value)
	return b
}

// WithIcons sets the resource's icons (a funcmcp key: funchost advertises
// them, the Azure Functions MCP extension does not).
func (b *ResourceBuilder) WithIcons(icons ...Icon) *ResourceBuilder {
	b.icons = append([]metadata.Icon(nil), icons...)
	return b
}

// WithRequiredScopes names OAuth scopes a caller's token must grant to
// read this resource, as [ToolBuilder.WithRequiredScopes] does for a tool: funchost
// refuses the request without them (or without OAuth), and so does the
// worker, with a -32600 failure reply naming the scopes (a [*ScopeError]).
func (b *ResourceBuilder) WithRequiredScopes(scopes ...string) *ResourceBuilder {
	b.scopes, b.errs = addScopes(b.scopes, b.errs, scopes)
	return b
}

// WithCompletion gives a template variable a fixed list of completion
// values (completion/complete; see [PromptBuilder.WithCompletion]).
func (b *ResourceBuilder) WithCompletion(variable string, values ...string) *ResourceBuilder {
	b.completions.fixed(variable, values)
	return b
}

// WithCompletionFunc lets f compute the completion values of a template
// variable.
func (b *ResourceBuilder) WithCompletionFunc(variable string, f CompletionHandler) *ResourceBuilder {
	b.errs = b.completions.dynamic(b.errs, variable, f)
	return b
}

// Handle sets the handler. A resource has exactly one.
func (b *ResourceBuilder) Handle(h ResourceHandler) *ResourceBuilder {
	if h == nil {
		b.errs = append(b.errs, ruleErr(ErrNoHandler, "Handle was given a nil handler"))
		return b
	}
	b.handler = h
	b.handlers++
	return b
}

func (b *ResourceBuilder) function() string {
	return cmp.Or(b.functionName, defaultResourceFunction(b.uri))
}

func (b *ResourceBuilder) options(function string) *metadata.ResourceOptions {
	return &metadata.ResourceOptions{
		URI: b.uri, Name: cmp.Or(b.name, function), Title: b.title, Description: b.description,
		MimeType: b.mimeType, Size: b.size, Metadata: b.metadata, Icons: b.icons, RequiredScopes: slices.Clone(b.scopes),
		Completions: b.completions.sources(),
	}
}

var notSlug = regexp.MustCompile(`[^a-z0-9]+`)

// defaultResourceFunction makes a function name from a URI.
func defaultResourceFunction(uri string) string {
	s := strings.Trim(notSlug.ReplaceAllString(strings.ToLower(uri), "_"), "_")
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		s = "resource_" + s
	}
	if len(s) > 128 {
		s = strings.TrimRight(s[:128], "_")
	}
	return s
}

// setMetadata is WithMetadata of every builder.
func setMetadata(fields []metadata.Field, errs []error, key string, value any) ([]metadata.Field, []error) {
	if key == "" {
		return fields, append(errs, ErrEmptyMetadataKey)
	}
	data, err := metadata.Marshal(value)
	if err != nil {
		return fields, append(errs, ruleErr(ErrMetadataValue, "metadata %q: %v: %v", key, ErrMetadataValue, err))
	}
	return metadata.SetField(fields, key, data), errs
}

// logBook holds the log lines of one invocation.
type logBook struct {
	mu   sync.Mutex
	logs []string
}

// Logf adds a line, formatted as by fmt.Sprintf, to the invocation's Logs,
// which the host writes to the function's log. It is safe for concurrent
// use.
func (l *logBook) Logf(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	l.mu.Lock()
	l.logs = append(l.logs, line)
	l.mu.Unlock()
}

// Logs returns the lines logged so far.
func (l *logBook) Logs() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string{}, l.logs...)
}
