// ts-otel.mjs drives the official MCP TypeScript client (@modelcontextprotocol/sdk
// 1.x) against an MCP endpoint, sending W3C trace context in each request's
// params._meta (traceparent, SEP-414), and prints one JSON report on
// stdout. The Go end-to-end telemetry tests run it and then look for the
// traces in an OpenTelemetry backend.
//
//   node ts-otel.mjs <endpoint-url> '<requests JSON>'
//
// <requests JSON> is an array of {"method": "tools/call" | "resources/read" |
// "prompts/get", "params": {...}, "traceparent": "00-…"}. The report holds,
// per request, {"ok": true, "result": …} or {"ok": false, "code": …,
// "message": …}.
//
// Exit codes: 0 report printed, 1 connect failure, 2 usage error.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, requestsArg] = process.argv.slice(2);
let requests;
try {
  requests = JSON.parse(requestsArg ?? '');
} catch {
  console.error("usage: node ts-otel.mjs <endpoint-url> '<requests JSON>'");
  process.exit(2);
}

const client = new Client({ name: 'funcmcp-e2e-ts-otel', version: '1.0.0' });
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
} catch (e) {
  console.log(JSON.stringify({ connectError: String(e?.message ?? e) }));
  process.exit(1);
}

const report = [];
for (const r of requests) {
  const params = { ...r.params, _meta: { traceparent: r.traceparent } };
  try {
    let result;
    switch (r.method) {
      case 'tools/call':
        result = await client.callTool(params);
        break;
      case 'resources/read':
        result = await client.readResource(params);
        break;
      case 'prompts/get':
        result = await client.getPrompt(params);
        break;
      default:
        throw new Error(`no such method in this script: ${r.method}`);
    }
    report.push({ ok: true, result });
  } catch (e) {
    report.push({ ok: false, code: e?.code ?? null, message: String(e?.message ?? e) });
  }
}
await client.close();
console.log(JSON.stringify(report));
