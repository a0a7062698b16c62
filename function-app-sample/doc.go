// Command function-app-sample is an Azure Functions custom handler whose
// functions are MCP tools, written with the funcmcp worker SDK.
//
// Build it as the app's handler and write the function folders next to it:
//
//	go build -o dist/app/handler ./function-app-sample
//	dist/app/handler emit-metadata dist/app
//
// Then serve dist/app with funchost (or with the Azure Functions host and its
// MCP extension): `make run` does all of it.
//
// The tools show every way of declaring a tool's output:
//
//   - get_weather: an explicit JSON Schema (WithOutputSchema) with nested
//     objects, arrays, enums, formats and required fields;
//   - mortgage_payment: a typed tool whose input and output schemas come from
//     Go structs;
//   - list_holidays and primes: typed tools returning slices, whose natural
//     output is an array (SEP-2106): MCP 2026-07-28 clients get the array,
//     older clients and the Azure Functions host an object wrapping it
//     ({"result": [...]} by default, or a field named by WithOutputField);
//   - fibonacci: an explicit array output schema with a $ref into its $defs,
//     served the same two ways (the $ref is rewritten in the projection);
//   - to_roman: no output schema, plain text;
//   - bar_chart: an image (a PNG drawn in code) and a caption, declared with
//     WithContentKinds("image/png", "text/plain");
//   - estimate_pi: a long-running typed tool that reports progress and sends
//     log messages to the client.
//
// All data is computed from the arguments, with no network; estimate_pi's
// random points come from a fixed seed, so the same arguments give the same
// result.
package main
