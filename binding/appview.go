package binding

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/funcmcp/funcmcp/internal/jsonx"
	"github.com/funcmcp/funcmcp/metadata"
)

// ErrViewNotServed is the reason [Registry.CheckToolView] gives for a tool
// whose _meta.ui.resourceUri names a resource the app does not serve.
var ErrViewNotServed = errors.New("the MCP App view is not served")

// UIResourceURI returns the _meta.ui.resourceUri of a tool (an MCP App,
// SEP-1865): ok is false when its metadata has no ui object or the object
// has no resourceUri; an error when ui is not an object or resourceUri not
// a non-empty string.
func (t *Trigger) UIResourceURI() (uri string, ok bool, err error) {
	if len(t.Metadata) == 0 {
		return "", false, nil
	}
	var meta map[string]json.RawMessage
	if json.Unmarshal(t.Metadata, &meta) != nil {
		return "", false, nil // ParseTrigger checked it is an object
	}
	rawUI, present := meta[metadata.MetaKeyUI]
	if !present || jsonx.IsNull(rawUI) {
		return "", false, nil
	}
	var ui map[string]json.RawMessage
	if json.Unmarshal(rawUI, &ui) != nil || ui == nil {
		return "", false, fmt.Errorf("%s: _meta.%s must be a JSON object", metadata.KeyMetadata, metadata.MetaKeyUI)
	}
	rawURI, present := ui["resourceUri"]
	if !present || jsonx.IsNull(rawURI) {
		return "", false, nil
	}
	if json.Unmarshal(rawURI, &uri) != nil || uri == "" {
		return "", false, fmt.Errorf("%s: _meta.%s.resourceUri must be a non-empty string", metadata.KeyMetadata, metadata.MetaKeyUI)
	}
	return uri, true, nil
}

// CheckToolView is the MCP App rule of both sides: a tool whose metadata
// names a view (_meta.ui.resourceUri) is served only when the app serves a
// resource at that URI (the view function, "functions--mcpapp-<tool>",
// for an app the worker SDK builds). It returns nil for a tool without a
// view, else a *ToolError (wrapping [ErrViewNotServed] when no resource
// serves the URI). Call it once every resource is registered.
func (r *Registry) CheckToolView(t *Trigger) error {
	uri, ok, err := t.UIResourceURI()
	if err != nil {
		return t.toolErr(err)
	}
	if !ok {
		return nil
	}
	if err := ValidateResourceURI(uri); err != nil {
		return t.toolErr(fmt.Errorf("%s: _meta.%s.resourceUri: %w", metadata.KeyMetadata, metadata.MetaKeyUI, err))
	}
	if _, _, found := r.LookupResource(uri); !found {
		return t.toolErr(fmt.Errorf("%w: _meta.%s.resourceUri is %s, and no resource function serves that URI (the view of an MCP App is the resource function %s)",
			ErrViewNotServed, metadata.MetaKeyUI, jsonx.QuoteSafe(uri), jsonx.QuoteSafe(metadata.AppViewFunctionName(t.ToolName))))
	}
	return nil
}
