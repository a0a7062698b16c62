package binding

import (
	"fmt"
	"strings"

	"github.com/funcmcp/funcmcp/internal/jsonx"
)

// Registry holds the resources, resource templates and prompts an app
// serves, with the extension's registration rules (DefaultResourceRegistry
// and DefaultPromptRegistry): static URIs are unique and looked up
// case-insensitively, no two templates have the same structure
// ([URITemplate.Structure], compared case-insensitively), prompt names are
// unique case-insensitively. The worker SDK fills one at build time and the
// host at load, so an app the worker builds is one the host registers.
//
// The zero value is empty and ready to use. A Registry is not safe for
// concurrent use while it is being filled; lookups may run concurrently
// once it is.
type Registry struct {
	statics   map[string]*Resource // lower-case URI →
	order     []*Resource          // statics in registration order
	templates []*Resource
	prompts   map[string]*Prompt // lower-case name →
	pOrder    []*Prompt
}

// DuplicateError is a resource, template or prompt the registry refuses
// because another one takes its place. Reach it with errors.As.
type DuplicateError struct {
	Kind     string // KindResource, KindTemplate or KindPrompt
	Name     string // the URI, template or prompt name refused
	Existing string // the one registered first
	Function string // the function of the one registered first
}

func (e *DuplicateError) Error() string {
	q := jsonx.QuoteSafe
	switch e.Kind {
	case KindTemplate:
		return fmt.Sprintf("a resource template with an equivalent URI pattern is already registered by function %s: existing %s, new %s", q(e.Function), q(e.Existing), q(e.Name))
	case KindPrompt:
		return fmt.Sprintf("prompt %s is already registered by function %s (prompt names are case-insensitive)", q(e.Name), q(e.Function))
	}
	return fmt.Sprintf("resource %s is already registered by function %s (resource URIs are compared case-insensitively)", q(e.Name), q(e.Function))
}

// AddResource registers a loaded resource or template. A second static
// resource with the same URI (case-insensitively) or a second template with
// the same structure is refused with a *LoadError wrapping a
// *DuplicateError.
func (r *Registry) AddResource(res *Resource) error {
	if res.Template != nil {
		for _, t := range r.templates {
			if strings.EqualFold(t.Template.Structure(), res.Template.Structure()) {
				return res.duplicate(&DuplicateError{Kind: KindTemplate, Name: res.URI, Existing: t.URI, Function: t.Function})
			}
		}
		r.templates = append(r.templates, res)
		return nil
	}
	key := strings.ToLower(res.URI)
	if prev, ok := r.statics[key]; ok {
		return res.duplicate(&DuplicateError{Kind: KindResource, Name: res.URI, Existing: prev.URI, Function: prev.Function})
	}
	if r.statics == nil {
		r.statics = map[string]*Resource{}
	}
	r.statics[key] = res
	r.order = append(r.order, res)
	return nil
}

func (res *Resource) duplicate(d *DuplicateError) error {
	return &LoadError{Function: res.Function, Kind: res.Kind(), Name: res.URI, File: res.File, Err: d}
}

// AddPrompt registers a loaded prompt; a second prompt with the same name
// (case-insensitively) is refused with a *LoadError wrapping a
// *DuplicateError.
func (r *Registry) AddPrompt(p *Prompt) error {
	key := strings.ToLower(p.Name)
	if prev, ok := r.prompts[key]; ok {
		return &LoadError{Function: p.Function, Kind: KindPrompt, Name: p.Name, File: p.File,
			Err: &DuplicateError{Kind: KindPrompt, Name: p.Name, Existing: prev.Name, Function: prev.Function}}
	}
	if r.prompts == nil {
		r.prompts = map[string]*Prompt{}
	}
	r.prompts[key] = p
	r.pOrder = append(r.pOrder, p)
	return nil
}

// LookupResource finds the resource that serves a requested URI, as the
// extension does: a static resource by its URI (case-insensitively) first,
// then the templates in registration order; for a template it returns the
// variables' values. It does not validate uri: see [ValidateResourceURI].
func (r *Registry) LookupResource(uri string) (*Resource, map[string]string, bool) {
	if res, ok := r.statics[strings.ToLower(uri)]; ok {
		return res, nil, true
	}
	for _, t := range r.templates {
		if vars, ok := t.Template.Match(uri); ok {
			return t, vars, true
		}
	}
	return nil, nil, false
}

// Template finds a template by its exact text (a completion's ref/resource
// uri), compared case-insensitively.
func (r *Registry) Template(uriTemplate string) (*Resource, bool) {
	for _, t := range r.templates {
		if strings.EqualFold(t.URI, uriTemplate) {
			return t, true
		}
	}
	return nil, false
}

// Prompt finds a prompt by name, case-insensitively.
func (r *Registry) Prompt(name string) (*Prompt, bool) {
	p, ok := r.prompts[strings.ToLower(name)]
	return p, ok
}

// Resources returns the static resources, Templates the templates and
// Prompts the prompts, each in registration order.
func (r *Registry) Resources() []*Resource { return append([]*Resource(nil), r.order...) }

// Templates: see [Registry.Resources].
func (r *Registry) Templates() []*Resource { return append([]*Resource(nil), r.templates...) }

// Prompts: see [Registry.Resources].
func (r *Registry) Prompts() []*Prompt { return append([]*Prompt(nil), r.pOrder...) }
