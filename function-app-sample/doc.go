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
//   - list_holidays and primes: typed tools returning slices, wrapped in an
//     object ({"result": [...]} by default, or a field named by WithOutputField);
//   - to_roman: no output schema, plain text;
//   - bar_chart: an image (a PNG drawn in code).
//
// All data is computed from the arguments: no randomness, no network.
package main
