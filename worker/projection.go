package worker

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/funcmcp/funcmcp/binding"
	"github.com/funcmcp/funcmcp/metadata"
)

// projectOutput writes a tool's output schemas into opts from its natural
// output schema (any JSON Schema 2020-12 document, SEP-2106):
// opts.OutputSchema gets the object projection that the Azure Functions
// host and MCP clients before 2026-07-28 accept ([binding.ProjectSchema]),
// and opts.NaturalOutputSchema the natural schema when the two differ.
// wrapped says whether results must be wrapped as {"<field>": value} to
// match the projection.
func projectOutput(c *binding.Compiler, opts *metadata.ToolOptions, natural, field string) (wrapped bool, err error) {
	if natural == "" {
		return false, nil
	}
	projected, wrapped, err := binding.ProjectSchema(json.RawMessage(natural), field)
	if err != nil {
		return false, ruleErr(ErrOutputType, "%v: %v", ErrOutputType, err)
	}
	if _, err := c.ParseSchema(binding.OutputSchema, string(projected)); err != nil {
		return false, ruleErr(ErrOutputType, "%v: the object projection of the output schema is rejected: %v", ErrOutputType, err)
	}
	opts.OutputSchema = string(projected)
	if opts.OutputSchema != natural {
		opts.NaturalOutputSchema = natural
	}
	return wrapped, nil
}

// projecting returns an invoker that sends the structuredContent of inv's
// results in the projected form, {"<field>": value}: the worker answers
// with what outputSchema in function.json describes, so the Azure Functions
// host (which never unwraps) and its clients see one shape, and funchost
// unwraps it for 2026-07-28 clients. A text block that mirrored the natural
// JSON ([metadata.IsTextCopy]: its text is exactly the compact JSON) mirrors
// the wrapped JSON instead; other text is the handler's own and is kept.
// This is the one place where a worker result is wrapped.
func projecting(inv invoker, field string) invoker {
	return func(ctx context.Context, tc *ToolContext, t *tool) (*Result, error) {
		res, err := inv(ctx, tc, t)
		if err != nil || res == nil || res.IsError || res.StructuredContent == nil {
			return res, err
		}
		natural, err := metadata.Marshal(res.StructuredContent)
		if err != nil {
			return nil, fmt.Errorf("encoding structured content: %w", err)
		}
		wrapped, err := binding.ProjectValue(natural, field)
		if err != nil {
			return nil, err
		}
		out := *res
		out.StructuredContent = wrapped
		out.Content = make([]Content, len(res.Content))
		for i, c := range res.Content {
			out.Content[i] = c
			if metadata.IsTextCopy(c, natural) {
				out.Content[i] = Text(string(wrapped))
			}
		}
		return &out, nil
	}
}
