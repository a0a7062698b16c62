// progress-client.mjs calls one tool with an official MCP TypeScript client,
// asking for progress (a progressToken, through the SDK's onprogress) and,
// on revisions that have it, for log messages (logging/setLevel), and
// prints on stdout one JSON report: every notification and the result, in
// the order the client received them. The Go end-to-end tests run it.
//
//   node progress-client.mjs <endpoint-url> <tool> '<arguments JSON>' <log level|none> [client]
//
// [client] is "v1" (the default: @modelcontextprotocol/sdk 1.x, 2025-11-25)
// or "v2-auto" (@modelcontextprotocol/client 2.x, which speaks 2026-07-28
// with a server that does; it has no logging/setLevel there: the level is
// sent in the call's _meta).
//
// Exit codes: 0 report printed, 1 the call failed, 2 usage error.
const [url, tool, argsArg, level, clientArg = 'v1'] = process.argv.slice(2);
if (!url || !tool || !argsArg || !level || !['v1', 'v2-auto'].includes(clientArg)) {
  console.error('usage: node progress-client.mjs <endpoint-url> <tool> <arguments-json> <log-level|none> [v1|v2-auto]');
  process.exit(2);
}
const v2 = clientArg === 'v2-auto';
const { Client, StreamableHTTPClientTransport } = v2
  ? await import('@modelcontextprotocol/client')
  : {
      ...(await import('@modelcontextprotocol/sdk/client/index.js')),
      ...(await import('@modelcontextprotocol/sdk/client/streamableHttp.js')),
    };

const events = [];
const client = new Client(
  { name: 'funcmcp-progress-client', version: '1.0.0' },
  v2 ? { versionNegotiation: { mode: 'auto' } } : {},
);
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  if (level !== 'none' && !v2) {
    const { LoggingMessageNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      events.push({ kind: 'log', level: n.params.level, logger: n.params.logger ?? null, data: n.params.data });
    });
    await client.setLoggingLevel(level);
  }
  const onprogress = (p) => events.push({ kind: 'progress', progress: p.progress, total: p.total ?? null, message: p.message ?? null });
  const params = { name: tool, arguments: JSON.parse(argsArg) };
  if (level !== 'none' && v2) {
    // 2026-07-28 has no logging/setLevel: the level travels in the request's _meta.
    client.setNotificationHandler('notifications/message', (n) => {
      events.push({ kind: 'log', level: n.params.level, logger: n.params.logger ?? null, data: n.params.data });
    });
    params._meta = { 'io.modelcontextprotocol/logLevel': level };
  }
  // v1 takes (params, resultSchema, options); v2 takes (params, options).
  const result = v2 ? await client.callTool(params, { onprogress }) : await client.callTool(params, undefined, { onprogress });
  events.push({ kind: 'result', result });
  console.log(JSON.stringify({ protocolVersion: client.transport?.protocolVersion ?? null, events }));
  await client.close();
} catch (e) {
  console.log(JSON.stringify({ events, error: String(e?.message ?? e) }));
  process.exit(1);
}
