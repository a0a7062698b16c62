package catalog

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

// functions are the served resources, resource templates and prompts, in
// the registry whose rules the worker SDK applies too, with their list
// entries encoded once.
type functions struct {
	reg                           binding.Registry
	resources, templates, prompts []json.RawMessage
}

// loadFunctions loads the resources and prompts of fns, in function order
// (the order the registry keeps for listing and template matching).
func (c *Catalog) loadFunctions(root string, fns []*metadata.Function) {
	for _, fn := range fns {
		file := filepath.Join(root, fn.Name, metadata.FunctionFile)
		res, prompts := fn.ResourceTriggers(), fn.PromptTriggers()
		switch {
		case len(res) == 1 && len(prompts) == 0:
			c.addResource(fn, res[0], file)
		case len(prompts) == 1 && len(res) == 0:
			c.addPrompt(fn, prompts[0], file)
		case len(res)+len(prompts) > 1:
			c.record(FunctionStatus{Name: fn.Name, Trigger: triggerType(fn)}, &metadata.FunctionError{Function: fn.Name, File: file,
				Err: fmt.Errorf("the function has %d MCP resource and prompt triggers; a function has exactly one trigger", len(res)+len(prompts))})
		}
	}
	for _, r := range c.fns.reg.Resources() {
		c.fns.resources = append(c.fns.resources, r.ListEntry())
	}
	for _, r := range c.fns.reg.Templates() {
		c.fns.templates = append(c.fns.templates, r.ListEntry())
	}
	for _, p := range c.fns.reg.Prompts() {
		c.fns.prompts = append(c.fns.prompts, p.ListEntry())
	}
}

func (c *Catalog) addResource(fn *metadata.Function, b *metadata.Binding, file string) {
	uri, _ := b.LookupString(metadata.KeyURI)
	st := FunctionStatus{Name: fn.Name, Trigger: b.Type(), Resource: uri}
	res, err := binding.LoadResource(fn, b, file)
	if err == nil {
		err = c.fns.reg.AddResource(res)
	}
	c.record(st, err)
}

func (c *Catalog) addPrompt(fn *metadata.Function, b *metadata.Binding, file string) {
	name, _ := b.LookupString(metadata.KeyPromptName)
	st := FunctionStatus{Name: fn.Name, Trigger: b.Type(), Prompt: name}
	p, err := binding.LoadPrompt(fn, b, file)
	if err == nil {
		err = c.fns.reg.AddPrompt(p)
	}
	c.record(st, err)
}

// LookupResource finds what serves a requested URI: a static resource (URIs
// compared case-insensitively), else the first template that matches, with
// its variables.
func (c *Catalog) LookupResource(uri string) (*binding.Resource, map[string]string, bool) {
	return c.fns.reg.LookupResource(uri)
}

// Template finds a resource template by its text.
func (c *Catalog) Template(uriTemplate string) (*binding.Resource, bool) {
	return c.fns.reg.Template(uriTemplate)
}

// Prompt finds a prompt by name (case-insensitively).
func (c *Catalog) Prompt(name string) (*binding.Prompt, bool) { return c.fns.reg.Prompt(name) }

// ResourceEntries, TemplateEntries and PromptEntries are the list entries,
// encoded once, in listing order; they must not be modified.
func (c *Catalog) ResourceEntries() []json.RawMessage { return c.fns.resources }

// TemplateEntries: see [Catalog.ResourceEntries].
func (c *Catalog) TemplateEntries() []json.RawMessage { return c.fns.templates }

// PromptEntries: see [Catalog.ResourceEntries].
func (c *Catalog) PromptEntries() []json.RawMessage { return c.fns.prompts }

// ScopedEntry is a tool, resource, resource template or prompt that
// requires scopes (requiredScopes).
type ScopedEntry struct {
	Kind     string // "tool", binding.KindResource, KindTemplate or KindPrompt
	Function string // the function (folder) name
	Name     string // the tool or prompt name, or the resource's URI (template)
	Scopes   []string
}

// ScopedEntries returns every tool, resource, resource template and prompt
// that requires scopes, tools first, each kind in load order.
func (c *Catalog) ScopedEntries() []ScopedEntry {
	var out []ScopedEntry
	for _, t := range c.Tools() {
		if s := t.Binding.Trigger.RequiredScopes; len(s) > 0 {
			out = append(out, ScopedEntry{Kind: "tool", Function: t.Function, Name: t.Name, Scopes: s})
		}
	}
	for _, r := range append(slices.Clone(c.fns.reg.Resources()), c.fns.reg.Templates()...) {
		if len(r.RequiredScopes) > 0 {
			out = append(out, ScopedEntry{Kind: r.Kind(), Function: r.Function, Name: r.URI, Scopes: r.RequiredScopes})
		}
	}
	for _, p := range c.fns.reg.Prompts() {
		if len(p.RequiredScopes) > 0 {
			out = append(out, ScopedEntry{Kind: binding.KindPrompt, Function: p.Function, Name: p.Name, Scopes: p.RequiredScopes})
		}
	}
	return out
}

// DeclaredScopes returns every OAuth scope a tool, resource, template or
// prompt requires (requiredScopes), each once, in load order.
func (c *Catalog) DeclaredScopes() []string {
	var out []string
	add := func(scopes []string) {
		for _, s := range scopes {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	for _, t := range c.Tools() {
		add(t.Binding.Trigger.RequiredScopes)
	}
	for _, r := range c.fns.reg.Resources() {
		add(r.RequiredScopes)
	}
	for _, r := range c.fns.reg.Templates() {
		add(r.RequiredScopes)
	}
	for _, p := range c.fns.reg.Prompts() {
		add(p.RequiredScopes)
	}
	return out
}
