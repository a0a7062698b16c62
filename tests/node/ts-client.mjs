// ts-client.mjs drives an official MCP TypeScript client against an MCP
// endpoint and prints one JSON report on stdout. The Go end-to-end tests run it.
//
//   node ts-client.mjs <endpoint-url> '<calls JSON>' [client]
//
// <calls JSON> is an array of {"name": "...", "arguments": {...}}. [client] is
// "v1" (the default: @modelcontextprotocol/sdk 1.x, which negotiates
// 2025-11-25 at most) or "v2-auto" (@modelcontextprotocol/client 2.x with
// versionNegotiation {mode: 'auto'}: it probes server/discover and speaks
// 2026-07-28 when the server does, else falls back to initialize). The
// client connects over Streamable HTTP, lists the tools (which makes the SDK
// cache and enforce every tool's outputSchema), then calls each tool in
// order. A call the SDK rejects (JSON-RPC error, or structuredContent that
// breaks the schema) is reported with its error code and message instead of
// a result.
//
// Exit codes: 0 report printed, 1 connect/list failure (report still printed
// when possible), 2 usage error.
const [url, callsArg, clientArg = 'v1'] = process.argv.slice(2);
if (!url || !['v1', 'v2-auto'].includes(clientArg)) {
  console.error('usage: node ts-client.mjs <endpoint-url> [calls-json] [v1|v2-auto]');
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

const v2 = clientArg === 'v2-auto';
const { Client, StreamableHTTPClientTransport } = v2
  ? await import('@modelcontextprotocol/client')
  : {
      ...(await import('@modelcontextprotocol/sdk/client/index.js')),
      ...(await import('@modelcontextprotocol/sdk/client/streamableHttp.js')),
    };

const report = { client: clientArg, connected: false, protocolVersion: null, serverInfo: null, instructions: null, tools: null, listError: null, calls: [] };
const info = { name: 'funcmcp-e2e-ts-client', version: '1.0.0' };
const client = v2 ? new Client(info, { versionNegotiation: { mode: 'auto' } }) : new Client(info);
const transport = new StreamableHTTPClientTransport(new URL(url));
let exitCode = 0;
try {
  await client.connect(transport);
  report.connected = true;
  report.protocolVersion = (v2 ? client.getNegotiatedProtocolVersion() : transport.protocolVersion) ?? null;
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
