package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/funcmcp/funcmcp/worker"
)

// The requested schemas of the suite's elicitation scenarios, as its
// scenario descriptions give them (tools.ts, elicitation-*.ts,
// input-required-result*.ts).
var (
	userInfoSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"username":{"type":"string","description":"User's response"},` +
		`"email":{"type":"string","description":"User's email address"}},` +
		`"required":["username","email"]}`)

	// SEP-1034: a default for every primitive type.
	defaultsSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"name":{"type":"string","title":"Name","default":"John Doe"},` +
		`"age":{"type":"integer","title":"Age","default":30},` +
		`"score":{"type":"number","title":"Score","default":95.5},` +
		`"status":{"type":"string","title":"Status","enum":["active","inactive","pending"],"default":"active"},` +
		`"verified":{"type":"boolean","title":"Verified","default":true}}}`)

	// SEP-1330: the five enum forms.
	enumsSchema = json.RawMessage(`{"type":"object","properties":{` +
		`"untitledSingle":{"type":"string","title":"Untitled single-select","enum":["option1","option2","option3"]},` +
		`"titledSingle":{"type":"string","title":"Titled single-select","oneOf":[` +
		`{"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},` +
		`"legacyEnum":{"type":"string","title":"Legacy titled enum","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},` +
		`"untitledMulti":{"type":"array","title":"Untitled multi-select","items":{"type":"string","enum":["option1","option2","option3"]}},` +
		`"titledMulti":{"type":"array","title":"Titled multi-select","items":{"anyOf":[` +
		`{"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}}}`)

	nameSchema    = json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`)
	colorSchema   = json.RawMessage(`{"type":"object","properties":{"color":{"type":"string"}},"required":["color"]}`)
	confirmSchema = json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)
	contextSchema = json.RawMessage(`{"type":"object","properties":{"context":{"type":"string"}},"required":["context"]}`)
)

// The questions of the input-required scenarios.
const (
	askName         = "What is your name?"
	askCapital      = "What is the capital of France?"
	askConfirm      = "Please confirm"
	askGreeting     = "Generate a greeting"
	askStep1        = "Step 1: What is your name?"
	askStep2        = "Step 2: What is your favorite color?"
	askPromptCtx    = "What context should the prompt use?"
	askStreamingAck = "Please confirm to continue"
)

// reconnectPause is how long test_reconnection keeps running after it has
// asked the host to close the client's response stream, so that the result
// comes after the close.
const reconnectPause = 200 * time.Millisecond

// registerClientRequestTools adds the tools and the prompt that ask the
// client: sampling and elicitation on the stream (tools-call-sampling,
// tools-call-elicitation, elicitation-sep1034-defaults,
// elicitation-sep1330-enums), the SSE polling tool (server-sse-polling),
// server-stateless's test_missing_capability and
// test_streaming_elicitation, and the input-required-result-* tools and
// prompt of MCP 2026-07-28. Each handler is written once for both flows: on
// the stream its requests return the answers; on 2026-07-28 an unanswered
// request ends the run (worker.ErrInputRequired, returned as is) and the
// handler runs again with the answers.
func registerClientRequestTools(app *worker.App) {
	registerStreamRequestTools(app)
	registerInputRequiredTools(app)
}

func registerStreamRequestTools(app *worker.App) {
	app.ConfigureMcpTool("test_sampling").
		WithDescription("Asks the client's model to answer the prompt (sampling/createMessage).").
		WithProperty("prompt", worker.String, "The prompt to send to the LLM", worker.Required).
		Handle(func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			var in struct {
				Prompt string `json:"prompt"`
			}
			if err := tc.BindArguments(&in); err != nil {
				return nil, err
			}
			msg, err := tc.CreateMessage(ctx, userPrompt(in.Prompt, 100))
			if err != nil {
				return nil, err
			}
			return worker.TextResult("LLM response: " + msg.Text()), nil
		})

	app.ConfigureMcpTool("test_elicitation").
		WithDescription("Asks the user for a username and an email address (elicitation/create).").
		WithProperty("message", worker.String, "The message to show the user", worker.Required).
		Handle(func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			var in struct {
				Message string `json:"message"`
			}
			if err := tc.BindArguments(&in); err != nil {
				return nil, err
			}
			el, err := tc.Elicit(ctx, in.Message, userInfoSchema)
			if err != nil {
				return nil, err
			}
			return worker.TextResult("User response: " + describe(el)), nil
		})

	app.ConfigureMcpTool("test_elicitation_sep1034_defaults").
		WithDescription("Asks the user to fill in fields that have default values (SEP-1034).").
		Handle(elicitTool("Please review and update the form fields with defaults", defaultsSchema))

	app.ConfigureMcpTool("test_elicitation_sep1330_enums").
		WithDescription("Asks the user to choose from the five enum forms (SEP-1330).").
		Handle(elicitTool("Please select options from the enum fields", enumsSchema))

	app.ConfigureMcpTool("test_reconnection").
		WithDescription("Closes the client's response stream mid-call, then answers on the resumed stream (SSE polling, SEP-1699).").
		Handle(func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			if err := tc.CloseSSEStream(ctx); err != nil {
				tc.Logf("the stream stays open: %v", err)
			}
			if !sleep(ctx, reconnectPause) {
				return nil, ctx.Err()
			}
			return worker.TextResult("Reconnection test completed successfully"), nil
		})

	// server-stateless (2026-07-28) calls it without the sampling
	// capability: the request fails before anything is sent, and the
	// CapabilityError the handler returns fails the call with -32021.
	app.ConfigureMcpTool("test_missing_capability").
		WithDescription("Needs the client's sampling capability.").
		Handle(func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			msg, err := tc.CreateMessage(ctx, userPrompt("Say hello", 20))
			if err != nil {
				return nil, err
			}
			return worker.TextResult("LLM response: " + msg.Text()), nil
		})

	// server-stateless (2026-07-28) checks that the call's stream carries
	// no request of its own: the elicitation travels in an input-required
	// result instead.
	app.ConfigureMcpTool("test_streaming_elicitation").
		WithDescription("Asks the user to confirm while the call is running.").
		Handle(elicitTool(askStreamingAck, confirmSchema))
}

func registerInputRequiredTools(app *worker.App) {
	app.ConfigureMcpTool("test_input_required_result_elicitation").
		WithDescription("Asks the user's name (elicitation), then greets them.").
		Handle(func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			el, err := tc.Elicit(ctx, askName, nameSchema, worker.InputKey("user_name"))
			if err != nil {
				return nil, err
			}
			return worker.TextResult(fmt.Sprintf("Hello, %s!", field(el, "name", "stranger"))), nil
		})

	app.ConfigureMcpTool("test_input_required_result_sampling").
		WithDescription("Asks the client's model for the capital of France (sampling).").
		Handle(func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			msg, err := tc.CreateMessage(ctx, userPrompt(askCapital, 100), worker.InputKey("capital_question"))
			if err != nil {
				return nil, err
			}
			return worker.TextResult("Sampling response: " + msg.Text()), nil
		})

	app.ConfigureMcpTool("test_input_required_result_list_roots").
		WithDescription("Asks the client for its roots, then lists them.").
		Handle(func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			roots, err := tc.ListRoots(ctx, worker.InputKey("client_roots"))
			if err != nil {
				return nil, err
			}
			return worker.TextResult("Client roots: " + rootList(roots)), nil
		})

	// The request state is funchost's: sealed, checked on the retry before
	// the handler runs again. A handler that runs with the answer has had
	// its state validated.
	app.ConfigureMcpTool("test_input_required_result_request_state").
		WithDescription("Asks the user to confirm; the answer comes back with the request state.").
		Handle(confirmTool("Confirmed (ok=%t): state-ok, the request state was verified"))

	app.ConfigureMcpTool("test_input_required_result_tampered_state").
		WithDescription("Asks the user to confirm; a retry whose request state was altered is refused.").
		Handle(confirmTool("Confirmed (ok=%t)"))

	app.ConfigureMcpTool("test_input_required_result_multiple_inputs").
		WithDescription("Asks the user's name, a greeting from the client's model and the client's roots, all at once.").
		Handle(func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			answers, err := tc.RequestInput(ctx, map[string]worker.InputRequest{
				"user_name":    worker.ElicitationRequest(askName, nameSchema),
				"greeting":     worker.SamplingRequest(userPrompt(askGreeting, 50)),
				"client_roots": worker.RootsRequest(),
			})
			if err != nil {
				return nil, err
			}
			var (
				el    worker.ElicitResult
				msg   worker.CreateMessageResult
				roots struct{ Roots []worker.Root }
			)
			if err := errors.Join(json.Unmarshal(answers["user_name"], &el), json.Unmarshal(answers["greeting"], &msg),
				json.Unmarshal(answers["client_roots"], &roots)); err != nil {
				return nil, fmt.Errorf("reading the answers: %w", err)
			}
			return worker.TextResult(fmt.Sprintf("%s %s (roots: %s)", msg.Text(), field(&el, "name", "stranger"), rootList(roots.Roots))), nil
		})

	app.ConfigureMcpTool("test_input_required_result_multi_round").
		WithDescription("Asks the user's name, then, in a second round, their favorite color.").
		Handle(func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			step1, err := tc.Elicit(ctx, askStep1, nameSchema, worker.InputKey("step1"))
			if err != nil {
				return nil, err
			}
			step2, err := tc.Elicit(ctx, askStep2, colorSchema, worker.InputKey("step2"))
			if err != nil {
				return nil, err
			}
			return worker.TextResult(fmt.Sprintf("%s's favorite color is %s", field(step1, "name", "someone"), field(step2, "color", "unknown"))), nil
		})

	// Only what the client declared: sampling, elicitation, both or none.
	app.ConfigureMcpTool("test_input_required_result_capabilities").
		WithDescription("Asks the client only what its declared capabilities allow.").
		Handle(func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
			caps := tc.ClientCapabilities()
			reqs := map[string]worker.InputRequest{}
			if _, ok := caps["sampling"]; ok {
				reqs["capital_question"] = worker.SamplingRequest(userPrompt(askCapital, 100))
			}
			if _, ok := caps["elicitation"]; ok {
				reqs["user_name"] = worker.ElicitationRequest(askName, nameSchema)
			}
			if len(reqs) == 0 {
				return worker.TextResult("The client declared neither sampling nor elicitation: nothing to ask"), nil
			}
			answers, err := tc.RequestInput(ctx, reqs)
			if err != nil {
				return nil, err
			}
			var got []string
			for _, k := range []string{"capital_question", "user_name"} {
				if _, ok := answers[k]; ok {
					got = append(got, k)
				}
			}
			return worker.TextResult("Answered: " + strings.Join(got, ", ")), nil
		})

	app.ConfigureMcpPrompt("test_input_required_result_prompt").
		WithDescription("A prompt that asks the user for its context first (elicitation).").
		Handle(func(ctx context.Context, pc *worker.PromptContext) (*worker.PromptResult, error) {
			el, err := pc.Elicit(ctx, askPromptCtx, contextSchema, worker.InputKey("user_context"))
			if err != nil {
				return nil, err
			}
			return &worker.PromptResult{
				Description: "A prompt built from the user's context",
				Messages:    []worker.PromptMessage{worker.UserMessage(worker.Text("Use this context: " + field(el, "context", "none")))},
			}, nil
		})
}

// elicitTool is a handler that asks message with schema and reports the
// answer as the elicitation scenarios ask.
func elicitTool(message string, schema json.RawMessage) worker.ToolHandler {
	return func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
		el, err := tc.Elicit(ctx, message, schema)
		if err != nil {
			return nil, err
		}
		return worker.TextResult("Elicitation completed: " + describe(el)), nil
	}
}

// confirmTool is a handler that asks the user to confirm (key "confirm")
// and answers format with the boolean.
func confirmTool(format string) worker.ToolHandler {
	return func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
		el, err := tc.Elicit(ctx, askConfirm, confirmSchema, worker.InputKey("confirm"))
		if err != nil {
			return nil, err
		}
		ok, _ := el.Content["ok"].(bool)
		return worker.TextResult(fmt.Sprintf(format, ok)), nil
	}
}

// userPrompt is a sampling request of one user message.
func userPrompt(text string, maxTokens int) *worker.CreateMessageParams {
	return &worker.CreateMessageParams{
		Messages:  []worker.SamplingMessage{{Role: "user", Content: worker.Text(text)}},
		MaxTokens: maxTokens,
	}
}

// describe is "action=<action>, content=<content as JSON>".
func describe(el *worker.ElicitResult) string {
	content, err := json.Marshal(el.Content)
	if err != nil || el.Content == nil {
		content = []byte("{}")
	}
	return fmt.Sprintf("action=%s, content=%s", el.Action, content)
}

// field is the string the user entered as name, or otherwise when they did
// not accept or left it out.
func field(el *worker.ElicitResult, name, otherwise string) string {
	if s, ok := el.Content[name].(string); ok && el.Action == "accept" && s != "" {
		return s
	}
	return otherwise
}

// rootList is the roots' URIs, comma-separated ("none" when there are none).
func rootList(roots []worker.Root) string {
	if len(roots) == 0 {
		return "none"
	}
	uris := make([]string, len(roots))
	for i, r := range roots {
		uris[i] = r.URI
	}
	return strings.Join(uris, ", ")
}
