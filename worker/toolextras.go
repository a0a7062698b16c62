package worker

import (
	"slices"

	"github.com/funcmcp/funcmcp/metadata"
)

// Icon is an icon of a tool, resource or prompt: Src (an https: or data:
// URI) with an optional MimeType, Sizes ("48x48", "any") and Theme
// ("light" or "dark").
type Icon = metadata.Icon

// ToolAnnotations are hints about a tool's behaviour: Title,
// ReadOnlyHint, DestructiveHint, IdempotentHint and OpenWorldHint (nil
// hints are not advertised; new(true) makes one).
type ToolAnnotations = metadata.ToolAnnotations

// WithAnnotations sets the tool's annotations, advertised in tools/list by
// funchost. They travel in a funcmcp key: the Azure Functions MCP extension
// (1.6) does not advertise tool annotations. The last call wins.
func (b *ToolBuilder) WithAnnotations(a ToolAnnotations) *ToolBuilder {
	b.annotations = &a
	return b
}

// WithIcons sets the tool's icons, advertised in tools/list by funchost
// (a funcmcp key on tools: the Azure Functions MCP extension does not
// advertise them). The last call wins.
func (b *ToolBuilder) WithIcons(icons ...Icon) *ToolBuilder {
	b.icons = slices.Clone(icons)
	return b
}

// applyExtras adds the annotations, icons and MCP App metadata to a
// tool's options. The app's "ui" entry replaces a "ui" set with
// WithMetadata, as the .NET worker's fluent MCP App configuration does.
func (b *ToolBuilder) applyExtras(opts *metadata.ToolOptions) {
	opts.Annotations = b.annotations
	opts.Icons = slices.Clone(b.icons)
	if b.mcpApp != nil {
		opts.Metadata = metadata.SetField(opts.Metadata, metadata.MetaKeyUI, b.mcpApp.toolUI(b.name))
	}
}
