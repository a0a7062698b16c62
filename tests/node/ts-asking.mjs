// ts-asking.mjs drives an official MCP TypeScript client, with elicitation
// and sampling handlers registered, through the sample's tools that ask the
// client (book_days_off asks the user, suggest_trip the client's model) and
// through estimate_pi with progress and log messages, and prints one JSON
// report on stdout. The Go end-to-end tests run it.
//
//   node ts-asking.mjs <endpoint-url> v1|v2-auto|v1-sse
//
// "v1" is @modelcontextprotocol/sdk 1.x over Streamable HTTP (2025-11-25),
// "v2-auto" @modelcontextprotocol/client 2.x negotiating 2026-07-28 (its
// input-required rounds are driven by the client), "v1-sse" the 1.x SDK over
// the legacy HTTP+SSE transport (<endpoint-url>/sse).
//
// Exit codes: 0 report printed, 1 connect failure, 2 usage error.
const [url, mode] = process.argv.slice(2);
if (!url || !['v1', 'v2-auto', 'v1-sse'].includes(mode)) {
  console.error('usage: node ts-asking.mjs <endpoint-url> v1|v2-auto|v1-sse');
  process.exit(2);
}
const v2 = mode === 'v2-auto';
const sdk = v2
  ? await import('@modelcontextprotocol/client')
  : {
      ...(await import('@modelcontextprotocol/sdk/client/index.js')),
      ...(await import('@modelcontextprotocol/sdk/client/streamableHttp.js')),
      ...(await import('@modelcontextprotocol/sdk/client/sse.js')),
      ...(await import('@modelcontextprotocol/sdk/types.js')),
    };
const info = { name: 'funcmcp-e2e-ts-asking', version: '1.0.0' };
const capabilities = { elicitation: {}, sampling: {} };
const client = v2
  ? new sdk.Client(info, { capabilities, versionNegotiation: { mode: 'auto' } })
  : new sdk.Client(info, { capabilities });

const report = { client: mode, protocolVersion: null, asked: [], book: null, trip: null, progress: [], logs: [], pi: null, wire: [] };
const elicit = async (req) => {
  const params = req.params ?? req;
  report.asked.push({ method: 'elicitation/create', message: params.message });
  return { action: 'accept', content: { confirm: true, note: 'booked from ' + mode } };
};
const sample = async (req) => {
  report.asked.push({ method: 'sampling/createMessage' });
  return { role: 'assistant', content: { type: 'text', text: 'Walk the fjords (' + mode + ').' }, model: 'e2e-model', stopReason: 'endTurn' };
};
if (v2) {
  client.setRequestHandler('elicitation/create', elicit);
  client.setRequestHandler('sampling/createMessage', sample);
  client.setNotificationHandler('notifications/message', (n) => report.logs.push((n.params ?? n).level));
} else {
  client.setRequestHandler(sdk.ElicitRequestSchema, elicit);
  client.setRequestHandler(sdk.CreateMessageRequestSchema, sample);
  client.setNotificationHandler(sdk.LoggingMessageNotificationSchema, (n) => report.logs.push(n.params.level));
}
const transport =
  mode === 'v1-sse' ? new sdk.SSEClientTransport(new URL(url + '/sse')) : new sdk.StreamableHTTPClientTransport(new URL(url));
const errorOf = (e) => ({ code: typeof e?.code === 'number' ? e.code : null, message: String(e?.message ?? e) });
let exitCode = 0;
try {
  await client.connect(transport);
  // What arrives on the wire, in order: the method of each notification
  // and request, "result" for each response.
  const onmessage = transport.onmessage;
  transport.onmessage = (m, extra) => {
    report.wire.push(m.method ?? 'result');
    return onmessage(m, extra);
  };
  report.protocolVersion = (v2 ? client.getNegotiatedProtocolVersion() : transport.protocolVersion) ?? null;
  // v1 takes (params, resultSchema, options); v2 takes (params, options).
  const call = async (name, args, options, meta) => {
    const params = { name, arguments: args, ...(meta ? { _meta: meta } : {}) };
    try {
      return v2 ? await client.callTool(params, options) : await client.callTool(params, undefined, options);
    } catch (e) {
      return { error: errorOf(e) };
    }
  };
  report.book = await call('book_days_off', { country: 'US', from: '2026-07-03', to: '2026-07-05' });
  report.trip = await call('suggest_trip', { country: 'NO', year: 2026 });
  if (!v2) await client.setLoggingLevel('info');
  // 2026-07-28 has no logging/setLevel: the level travels in the call's _meta.
  report.pi = await call(
    'estimate_pi',
    { samples: 100000, batches: 4 },
    { onprogress: (p) => report.progress.push(p.progress) },
    v2 ? { 'io.modelcontextprotocol/logLevel': 'info' } : undefined,
  );
} catch (e) {
  report.connectError = errorOf(e);
  exitCode = 1;
} finally {
  try {
    await client.close();
  } catch {}
}
console.log(JSON.stringify(report));
process.exit(exitCode);
