package host

import (
	"github.com/funcmcp/funcmcp/host/internal/config"
	"github.com/funcmcp/funcmcp/metadata"
)

// File names read from the script root.
const (
	HostFile          = config.HostFile
	LocalSettingsFile = config.LocalSettingsFile
)

// OutputValidation says what the host does with a tool result whose
// structuredContent does not match the tool's output schema, or whose
// content breaks the tool's declared content kinds (host.json
// extensions.mcp.outputValidation, overridden per tool by function.json
// outputValidation). The worker SDK reads the same setting.
type OutputValidation = metadata.OutputValidation

// The output validation modes.
const (
	// ValidationStrict turns a broken result into an isError result (the default).
	ValidationStrict = metadata.ValidationStrict
	// ValidationWarn delivers the result as it is and logs a warning.
	ValidationWarn = metadata.ValidationWarn
	// ValidationOff skips validation.
	ValidationOff = metadata.ValidationOff
)

// ConfigError is a problem with host.json, local.settings.json or the keys
// file: File, Key ("" for the whole file) and Err. Reach it with errors.As.
type ConfigError = config.Error

// AuthLevel is who may call the MCP endpoints
// (host.json extensions.mcp.system.webhookAuthorizationLevel).
type AuthLevel = config.AuthLevel

// Authorization levels.
const (
	// AuthAnonymous serves everyone.
	AuthAnonymous = config.AuthAnonymous
	// AuthSystem (the default) needs the mcp_extension system key or the
	// master key.
	AuthSystem = config.AuthSystem
	// AuthAdmin needs the master key.
	AuthAdmin = config.AuthAdmin
)
