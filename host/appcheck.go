package host

import (
	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

// Defaults of the app folder bounds in [Options].
const (
	DefaultMaxFunctionFileBytes = metadata.DefaultMaxFunctionFileBytes
	DefaultMaxSchemaBytes       = binding.DefaultMaxSchemaBytes
	DefaultMaxSchemaDepth       = binding.DefaultMaxSchemaDepth
	DefaultSchemaCompileTime    = binding.DefaultSchemaCompileTime
)

// appLimits bound what loading an app folder may cost.
type appLimits struct {
	fileBytes int64
	schema    binding.Limits
}
