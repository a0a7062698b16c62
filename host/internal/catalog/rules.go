package catalog

import (
	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

// loadTool decides whether the tool trigger b of fn can be served and
// compiles it. Every rule (the tool name, schema size and depth, local
// $ref, the schemas themselves, the compile budget in the compiler's
// limits) is binding's, the same the worker applies when it emits the
// function: this is the catalog's one call into them.
func loadTool(c *binding.Compiler, fn *metadata.Function, b *metadata.Binding, file string) (*binding.Tool, error) {
	return c.LoadTool(fn, b, file)
}
