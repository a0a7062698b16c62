// ts-client.mjs drives the official MCP TypeScript SDK client against an MCP
// endpoint and prints one JSON report on stdout. The Go end-to-end tests run it.
//
//   node ts-client.mjs <endpoint-url> '<calls JSON>'
//
// <calls JSON> is an array of {"name": "...", "arguments": {...}}. The client
// connects over Streamable HTTP, lists the tools (which makes the SDK cache and
// enforce every tool's outputSchema), then calls each tool in order. A call the
// SDK rejects (JSON-RPC error, or structuredContent that breaks the schema) is
// reported with its error code and message instead of a result.
//
// Exit codes: 0 report printed, 1 connect/list failure (report still printed
// when possible), 2 usage error.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const [url, callsArg] = process.argv.slice(2);
if (!url) {
  console.error('usage: node ts-client.mjs <endpoint-url> [calls-json]');
  process.exit(2);
}
let calls = [];
try {
  calls = callsArg ? JSON.parse(callsArg) : [];
} catch (e) {
  console.error(`calls JSON is not valid: ${e.message}`);
  process.exit(2);
}

const errorOf = (e) => ({
  code: typeof e?.code === 'number' ? e.code : null,
  name: e?.name ?? null,
  message: String(e?.message ?? e),
});

const report = { connected: false, protocolVersion: null, serverInfo: null, instructions: null, tools: null, listError: null, calls: [] };
const client = new Client({ name: 'funcmcp-e2e-ts-client', version: '1.0.0' });
const transport = new StreamableHTTPClientTransport(new URL(url));
let exitCode = 0;
try {
  await client.connect(transport);
  report.connected = true;
  report.protocolVersion = transport.protocolVersion ?? null;
  report.serverInfo = client.getServerVersion() ?? null;
  report.instructions = client.getInstructions() ?? null;
  try {
    const listed = await client.listTools();
    report.tools = listed.tools;
  } catch (e) {
    report.listError = errorOf(e);
    exitCode = 1;
  }
  if (report.tools) {
    for (const call of calls) {
      try {
        const result = await client.callTool({ name: call.name, arguments: call.arguments ?? {} });
        report.calls.push({ name: call.name, ok: true, result });
      } catch (e) {
        report.calls.push({ name: call.name, ok: false, error: errorOf(e) });
      }
    }
  }
} catch (e) {
  report.listError = errorOf(e);
  exitCode = 1;
} finally {
  try {
    await client.close();
  } catch {
    // closing a half-open connection is best effort
  }
}
process.stdout.write(JSON.stringify(report) + '\n');
process.exit(exitCode);
