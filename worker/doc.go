// Package worker is the funcmcp SDK for function apps: a Go program that is
// an Azure Functions custom handler whose functions are MCP tools, with
// output schemas and structured results.
//
// # Quick start
//
//	type WeatherIn struct {
//		City  string `json:"city" description:"The city name"`
//		Units string `json:"units,omitempty" enum:"celsius,fahrenheit"`
//	}
//	type Weather struct {
//		City string  `json:"city"`
//		Temp float64 `json:"temp" description:"Temperature in the requested units"`
//	}
//
//	func main() {
//		app := worker.New(nil)
//		worker.AddTool(app, "get_weather", func(ctx context.Context, tc *worker.ToolContext, in WeatherIn) (*worker.Result, Weather, error) {
//			tc.Logf("weather for %s", in.City)
//			return nil, Weather{City: in.City, Temp: 21.5}, nil
//		}).WithDescription("Current weather for a city.")
//
//		app.ConfigureMcpTool("echo").
//			WithDescription("Echoes a message.").
//			WithProperty("message", worker.String, "The message", worker.Required).
//			Handle(func(ctx context.Context, tc *worker.ToolContext) (*worker.Result, error) {
//				var in struct{ Message string `json:"message"` }
//				if err := tc.BindArguments(&in); err != nil {
//					return nil, err
//				}
//				return worker.TextResult(in.Message), nil
//			})
//		app.Main()
//	}
//
// Build time: generate the function folders next to host.json, e.g. with
//
//	//go:generate go run . emit-metadata ../dist/app
//
// which runs "<app> emit-metadata DIR" and writes DIR/<function>/function.json
// for every tool (or, on any configuration problem, writes nothing, prints
// every problem and exits 1). Run time: the Functions host (or funchost)
// starts the program with no arguments and FUNCTIONS_CUSTOMHANDLER_PORT set;
// [App.Main] serves the custom-handler protocol on 127.0.0.1 until SIGINT or
// SIGTERM.
//
// # Configuration
//
// [App.ConfigureMcpTool] returns the tool's [ToolBuilder]; calls for the same
// name accumulate. Builders only record: [App.Build], [App.Functions],
// [App.EmitMetadata] and the serve mode report every problem of every tool
// together (errors.Join), each a *[ConfigError] naming the tool and wrapping
// the rule broken (ErrEmptyToolName, ErrInvalidFunctionName, ErrNoHandler,
// ErrDuplicateFunction, …, or the schema errors of package binding:
// *binding.SyntaxError, *binding.ShapeError, *binding.CompileError). Schemas
// are checked with binding.ParseSchema, the same check the host applies.
//
// # Schemas from Go types
//
// [AddTool] infers the input schema from In and the output schema from Out:
//   - json tags: the name, "-" (skipped), omitempty/omitzero (not required),
//     ",string" (a string); fields without omitempty are required, except
//     pointers;
//   - a `description:"…"` tag becomes the description, and `enum:"a,b"` (on a
//     string field or a slice of strings) the allowed values;
//   - embedded structs are inlined, as encoding/json does;
//   - slices and arrays are arrays of their items; []byte is a base64
//     string; maps are objects with additionalProperties;
//   - pointers, slices and maps can encode as null, so their type also
//     allows "null";
//   - time.Time is {"type":"string","format":"date-time"}; json.RawMessage,
//     interfaces and types with their own MarshalJSON are {} (any value);
//     types with MarshalText are strings;
//   - integers are "integer" (unsigned ones with minimum 0), floats "number";
//   - a recursive struct is defined once under $defs and referenced by $ref.
//
// In must describe an object. Its schema is emitted as inputSchema (with
// useWorkerInputSchema: true) and its top-level fields as toolProperties, so
// hosts that predate worker input schemas still list the arguments. A struct
// or map Out is the structured result; any other Out is wrapped as
// {"result": value} (WithOutputField renames the field). Explicit
// WithInputSchema/WithOutputSchema calls win over inferred schemas.
//
// # Invocation
//
// POST /{function} receives {"Data":{"context":<tool invocation context>},
// "Metadata":{…}}; the context may be JSON-encoded as a string any number of
// times. The reply is always 200 with {"Outputs":{},"Logs":[…],
// "ReturnValue":"<result envelope as a JSON string>"}: typed results are a
// call_tool_result with structuredContent and a text block holding the same
// JSON; a single text result is type text. Handler errors, panics and
// arguments that do not decode into In become isError results; the process
// keeps serving. An unknown function is 404 and a malformed body 400, both
// with {"error":"…"}.
package worker
