// ts-listen.mjs subscribes with an official TypeScript client and prints
// what it hears, one JSON line at a time, for the Go tests to read.
//
//   node ts-listen.mjs legacy <endpoint-url> <uri>      SDK 1.x, 2025-11-25, Streamable HTTP: resources/subscribe
//   node ts-listen.mjs legacy-sse <sse-url> <uri>       SDK 1.x, the legacy SSE transport: resources/subscribe
//   node ts-listen.mjs listen <endpoint-url> <uri>      client 2.x, 2026-07-28: subscriptions/listen
//   node ts-listen.mjs tasks <endpoint-url> <tool> <arguments-json>
//                                                       client 2.x: call a task tool, listen for its taskId
//
// Lines: {"ready":…} once subscribed (the Go test then makes the change),
// then {"updated":uri} (resource modes) or {"task":…} for each
// notifications/tasks and a last {"report":…} (tasks mode). Exit 0 when
// it heard what it waited for, 1 on failure (an {"error":…} line), 2 on a
// usage error. It gives up after 20 s.
const [mode, url, a, b] = process.argv.slice(2);
if (!mode || !url || !a) {
  console.error('usage: node ts-listen.mjs legacy|legacy-sse|listen <url> <uri> | tasks <url> <tool> <arguments-json>');
  process.exit(2);
}
const say = (o) => console.log(JSON.stringify(o));
const info = { name: 'funcmcp-e2e-ts-listen', version: '1.0.0' };
const TASKS = 'io.modelcontextprotocol/tasks';
setTimeout(() => {
  say({ error: 'gave up after 20 s' });
  process.exit(1);
}, 20000).unref();

// A Standard Schema accepting any object (for a notification the client
// has no schema of).
const anyObject = {
  '~standard': {
    version: 1,
    vendor: 'funcmcp-e2e',
    validate(value) {
      return value !== null && typeof value === 'object' ? { value } : { issues: [{ message: 'not an object' }] };
    },
  },
};

try {
  if (mode === 'legacy' || mode === 'legacy-sse') {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
    const { SSEClientTransport } = await import('@modelcontextprotocol/sdk/client/sse.js');
    const { ResourceUpdatedNotificationSchema } = await import('@modelcontextprotocol/sdk/types.js');
    const client = new Client(info, { capabilities: {} });
    const heard = new Promise((resolve) => client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => resolve(n.params.uri)));
    // Streamable HTTP: the notifications come on the session's GET stream,
    // which the SDK opens on its own after connecting; ready waits for its
    // answer (the server registers the stream before it answers).
    let streamOpen;
    const opened = new Promise((resolve) => (streamOpen = resolve));
    const watched = async (input, init) => {
      const res = await fetch(input, init);
      if ((init?.method ?? 'GET') === 'GET' && res.ok) streamOpen();
      return res;
    };
    const transport =
      mode === 'legacy' ? new StreamableHTTPClientTransport(new URL(url), { fetch: watched }) : new SSEClientTransport(new URL(url));
    await client.connect(transport);
    await client.subscribeResource({ uri: a });
    if (mode === 'legacy') await opened;
    say({ ready: { protocolVersion: transport.protocolVersion ?? null, capabilities: client.getServerCapabilities() } });
    say({ updated: await heard });
    await client.close();
  } else if (mode === 'listen') {
    const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    const client = new Client(info, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
    const heard = new Promise((resolve) => client.setNotificationHandler('notifications/resources/updated', (n) => resolve(n.params.uri)));
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const sub = await client.listen({ resourceSubscriptions: [a] });
    say({ ready: { protocolVersion: client.getNegotiatedProtocolVersion() ?? null, honoredFilter: sub.honoredFilter } });
    say({ updated: await heard });
    await sub.close();
    await client.close();
  } else if (mode === 'tasks') {
    const { Client, StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client');
    const client = new Client(info, { capabilities: { extensions: { [TASKS]: {} } }, versionNegotiation: { mode: 'auto' } });
    const transport = new StreamableHTTPClientTransport(new URL(url));
    const sent = [];
    const handles = [];
    const send = transport.send.bind(transport);
    transport.send = (m, o) => {
      if (m.method) sent.push(m.method);
      return send(m, o);
    };
    let done;
    const finished = new Promise((resolve) => (done = resolve));
    const tasks = [];
    client.setNotificationHandler('notifications/tasks', { params: anyObject }, (params) => {
      tasks.push(params);
      say({ task: { status: params.status, statusMessage: params.statusMessage ?? null } });
      if (['completed', 'failed', 'cancelled'].includes(params.status)) done(params);
    });
    await client.connect(transport);
    const onmessage = transport.onmessage;
    transport.onmessage = (m, extra) => {
      if (m.result?.resultType === 'task') handles.push(m.result);
      return onmessage(m, extra);
    };
    // Client 2.4 has no result kind for a task handle: read it off the wire.
    await client.callTool({ name: a, arguments: JSON.parse(b ?? '{}') }).catch(() => {});
    const handle = handles[0];
    if (!handle) throw new Error('the call made no task');
    const sub = await client.listen({ taskIds: [handle.taskId] });
    say({ ready: { taskId: handle.taskId, honoredFilter: sub.honoredFilter } });
    const last = await finished;
    say({
      report: {
        taskId: handle.taskId,
        statuses: tasks.map((t) => t.status),
        messages: tasks.map((t) => t.statusMessage ?? null),
        last,
        subscriptionIds: tasks.map((t) => t._meta?.['io.modelcontextprotocol/subscriptionId'] ?? null),
        polls: sent.filter((m) => m === 'tasks/get').length,
      },
    });
    await sub.close();
    await client.close();
  } else {
    console.error('unknown mode ' + mode);
    process.exit(2);
  }
  process.exit(0);
} catch (e) {
  say({ error: String(e?.stack ?? e) });
  process.exit(1);
}
