package metadata

// Icon is an icon of a tool, resource or prompt, as MCP (2025-11-25)
// defines it and as the extension decodes a prompt's icons.
type Icon struct {
	// Src is the icon's URI: https: or a data: URI (required).
	Src string `json:"src"`
	// MimeType is the icon's MIME type ("" when not given).
	MimeType string `json:"mimeType,omitempty"`
	// Sizes lists the sizes the icon fits, such as "48x48" or "any".
	Sizes []string `json:"sizes,omitempty"`
	// Theme is "light" or "dark" when the icon is meant for one ("" for any).
	Theme string `json:"theme,omitempty"`
}

// Icon themes.
const (
	IconThemeLight = "light"
	IconThemeDark  = "dark"
)

// ToolAnnotations are hints about a tool's behaviour (MCP
// ToolAnnotations). A nil hint is not advertised. funcmcp writes them as
// [KeyAnnotations]; the Azure Functions MCP extension (1.6) does not
// advertise tool annotations.
type ToolAnnotations struct {
	// Title is a display title for the tool.
	Title string `json:"title,omitempty"`
	// ReadOnlyHint: the tool does not change its environment.
	ReadOnlyHint *bool `json:"readOnlyHint,omitempty"`
	// DestructiveHint: the tool may destroy or overwrite (meaningful only
	// when it is not read-only).
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	// IdempotentHint: calling it again with the same arguments has no
	// further effect (meaningful only when it is not read-only).
	IdempotentHint *bool `json:"idempotentHint,omitempty"`
	// OpenWorldHint: the tool reaches an open world of entities (the web),
	// rather than a closed domain.
	OpenWorldHint *bool `json:"openWorldHint,omitempty"`
}

// IsZero reports whether no annotation is set.
func (a ToolAnnotations) IsZero() bool {
	return a.Title == "" && a.ReadOnlyHint == nil && a.DestructiveHint == nil &&
		a.IdempotentHint == nil && a.OpenWorldHint == nil
}

// resolveExtras encodes the tool's annotations and icons, when set.
func (t *parsedTrigger) resolveExtras() error {
	if a := t.options.Annotations; a != nil && !a.IsZero() {
		data, err := Marshal(a)
		if err != nil {
			return err
		}
		s := string(data)
		t.annotations = &s
	}
	if tk := t.options.Task; tk != nil {
		if err := tk.Check(); err != nil {
			return err
		}
		data, err := Marshal(tk)
		if err != nil {
			return err
		}
		s := string(data)
		t.task = &s
	}
	if rs := t.options.RequiredScopes; len(rs) > 0 {
		if err := CheckScopes(rs); err != nil {
			return err
		}
		data, err := Marshal(rs)
		if err != nil {
			return err
		}
		s := string(data)
		t.requiredScopes = &s
	}
	if len(t.options.Icons) > 0 {
		data, err := Marshal(t.options.Icons)
		if err != nil {
			return err
		}
		s := string(data)
		t.icons = &s
	}
	return nil
}
