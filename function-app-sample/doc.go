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
//     WithContentKinds("image/png", "text/plain"); it is also an MCP App,
//     whose view (view/bar_chart.html, embedded in the binary) is served at
//     ui://bar_chart/view by the function functions--mcpapp-bar_chart;
//   - estimate_pi: a long-running typed tool that reports progress and sends
//     log messages to the client;
//   - simulate_epidemic: a tool that may take minutes (a stochastic SIR
//     epidemic; 20 seconds by default, so that a client without tasks gets
//     its result within its request timeout, up to 600 with
//     duration_seconds) declared with WithTaskSupport: a client that
//     negotiated the MCP tasks extension gets a task, polls it every second
//     and reads the progress as its status message; others wait for the
//     result, as for any tool;
//   - book_days_off: asks the user to confirm (elicitation) before it books
//     a period off, and leaves it unconfirmed when the client cannot ask;
//   - suggest_trip: asks the client's model (sampling) for a trip to fill
//     the year's longest break, with a built-in suggestion when it cannot;
//   - whoami: who calls (subject, name, scopes), from the identity the
//     host's authentication passes (tc.Caller), when there is one;
//   - caller_claims: every claim of the caller's token, behind a scope of
//     its own (WithRequiredScopes) that funchost asks for when it takes
//     access tokens, and refuses to every caller when it takes none.
//   - pin_note: pins a note, the note://pinned resource, and announces at
//     once that the resource changed (worker.NotifyResourceUpdated), so
//     that the clients subscribed to it hear of it; under the Azure
//     Functions host, which has no channel for it, the note is pinned and
//     the result says nobody was told.
//
// Beside the tools, it serves MCP resources and a prompt:
//
//   - holidays://countries: a static resource, the JSON list of the
//     countries list_holidays knows;
//   - holidays://{country}/{year}: a resource template, the year's holidays
//     as JSON; unknown countries are "not found" (-32002);
//   - note://pinned: the note pin_note pinned, with its revision (each
//     instance of the app holds its own);
//   - clock://utc/minute: the current minute, whose change a timer of the
//     process (a goroutine, outside any invocation) announces every minute;
//   - plan_days_off: a typed prompt with a required country and an optional
//     year, which embeds the year's holidays as a resource.
//
// The template and the prompt offer completions of the country (a fixed
// list) and the year (a function), a funcmcp feature that the Azure
// Functions MCP extension does not offer.
//
// All data is computed from the arguments, with no network; estimate_pi's
// random points come from a fixed seed and simulate_epidemic's draws from
// the seed it is given, so the same arguments give the same result.
package main
