// ts-functions.mjs drives an official MCP TypeScript client through an MCP
// server's resources, resource templates, prompts and completions and prints
// one JSON report on stdout. The Go end-to-end tests run it.
//
//   node ts-functions.mjs <endpoint-url> '<plan JSON>' [v1|v2-auto]
//
// <plan JSON> is {"read": [uri…], "prompts": [{"name","arguments"}…],
// "complete": [{"ref","argument"}…]}. The client (as in ts-client.mjs: "v1"
// is @modelcontextprotocol/sdk 1.x, "v2-auto" @modelcontextprotocol/client
// 2.x negotiating 2026-07-28) lists resources, templates and prompts, then
// runs each step; a step the SDK rejects is reported with its error.
//
// Exit codes: 0 report printed, 1 connect failure, 2 usage error.
const [url, planArg, clientArg = 'v1'] = process.argv.slice(2);
if (!url || !planArg || !['v1', 'v2-auto'].includes(clientArg)) {
  console.error("usage: node ts-functions.mjs <endpoint-url> '<plan-json>' [v1|v2-auto]");
  process.exit(2);
}
const plan = JSON.parse(planArg);
const v2 = clientArg === 'v2-auto';
const { Client, StreamableHTTPClientTransport } = v2
  ? await import('@modelcontextprotocol/client')
  : {
      ...(await import('@modelcontextprotocol/sdk/client/index.js')),
      ...(await import('@modelcontextprotocol/sdk/client/streamableHttp.js')),
    };
const errorOf = (e) => ({ code: typeof e?.code === 'number' ? e.code : null, message: String(e?.message ?? e) });
const step = async (f) => {
  try {
    return { ok: true, result: await f() };
  } catch (e) {
    return { ok: false, error: errorOf(e) };
  }
};
const info = { name: 'funcmcp-e2e-ts-functions', version: '1.0.0' };
const client = v2 ? new Client(info, { versionNegotiation: { mode: 'auto' } }) : new Client(info);
const transport = new StreamableHTTPClientTransport(new URL(url));
const report = { client: clientArg, protocolVersion: null, capabilities: null, resources: null, templates: null, prompts: null, reads: [], gets: [], completions: [] };
let exitCode = 0;
try {
  await client.connect(transport);
  report.protocolVersion = (v2 ? client.getNegotiatedProtocolVersion() : transport.protocolVersion) ?? null;
  report.capabilities = client.getServerCapabilities() ?? null;
  report.resources = await step(() => client.listResources());
  report.templates = await step(() => client.listResourceTemplates());
  report.prompts = await step(() => client.listPrompts());
  for (const uri of plan.read ?? []) report.reads.push(await step(() => client.readResource({ uri })));
  for (const p of plan.prompts ?? []) report.gets.push(await step(() => client.getPrompt(p)));
  for (const c of plan.complete ?? []) report.completions.push(await step(() => client.complete(c)));
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
