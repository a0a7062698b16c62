package main

import (
	"context"
	"fmt"

	"github.com/funcmcp/funcmcp/worker"
)

// The texts of the suite's prompt scenarios (prompts.ts).
const (
	simplePromptText   = "This is a simple prompt for testing."
	embeddedPromptText = "Embedded resource content for testing."
	embeddedPromptAsk  = "Please process the embedded resource above."
	imagePromptAsk     = "Please analyze the image above."
)

// registerPrompts adds the prompts the suite lists and gets (prompts-list,
// prompts-get-simple, -with-args, -embedded-resource, -with-image) and the
// completions completion-complete asks for.
func registerPrompts(app *worker.App) {
	app.ConfigureMcpPrompt("test_simple_prompt").
		WithDescription("A simple prompt without arguments.").
		Handle(func(context.Context, *worker.PromptContext) (*worker.PromptResult, error) {
			return worker.TextPromptResult(simplePromptText), nil
		})

	app.ConfigureMcpPrompt("test_prompt_with_arguments").
		WithDescription("A prompt with two required arguments.").
		WithArgument("arg1", "First test argument", worker.Required).
		WithArgument("arg2", "Second test argument", worker.Required).
		WithCompletion("arg1", "paris", "park", "party").
		WithCompletionFunc("arg2", func(_ context.Context, cc *worker.CompletionContext) ([]string, error) {
			return []string{cc.Value + "-one", cc.Value + "-two"}, nil
		}).
		Handle(func(_ context.Context, pc *worker.PromptContext) (*worker.PromptResult, error) {
			arg1, _ := pc.Argument("arg1")
			arg2, _ := pc.Argument("arg2")
			return worker.TextPromptResult(fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", arg1, arg2)), nil
		})

	app.ConfigureMcpPrompt("test_prompt_with_embedded_resource").
		WithDescription("A prompt that embeds a resource.").
		WithArgument("resourceUri", "URI of the resource to embed", worker.Required).
		Handle(func(_ context.Context, pc *worker.PromptContext) (*worker.PromptResult, error) {
			uri, _ := pc.Argument("resourceUri")
			return &worker.PromptResult{Messages: []worker.PromptMessage{
				worker.UserMessage(worker.EmbeddedResource(uri, "text/plain", embeddedPromptText)),
				worker.UserMessage(worker.Text(embeddedPromptAsk)),
			}}, nil
		})

	app.ConfigureMcpPrompt("test_prompt_with_image").
		WithDescription("A prompt with an image.").
		Handle(func(context.Context, *worker.PromptContext) (*worker.PromptResult, error) {
			return &worker.PromptResult{Messages: []worker.PromptMessage{
				worker.UserMessage(worker.Image(redPixelPNG(), "image/png")),
				worker.UserMessage(worker.Text(imagePromptAsk)),
			}}, nil
		})
}
