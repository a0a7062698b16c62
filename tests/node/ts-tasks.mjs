// ts-tasks.mjs drives the sample's long tool, simulate_epidemic, through an
// MCP task (the tasks extension, io.modelcontextprotocol/tasks, SEP-2663)
// with the official TypeScript client 2.x at 2026-07-28, and prints one JSON
// report on stdout. The Go end-to-end tests run it.
//
//   node ts-tasks.mjs <endpoint-url> <seconds> <seed> <long-seconds>
//
// 1. A client declaring the extension in its capabilities calls the tool
//    for <seconds> with <seed> and gets a task handle; it polls tasks/get,
//    waiting pollIntervalMs between polls, until the task is terminal.
//    Meanwhile a client without the extension makes the same call and
//    gets a plain synchronous result.
// 2. It starts a <long-seconds> run, cancels it with tasks/cancel, and reads
//    it once more with tasks/get.
//
// Client 2.4.0 sends tasks/get and tasks/cancel to a 2026-07-28 peer through
// request() with an explicit result schema, but has no result kind for a
// tools/call answered with resultType "task": callTool rejects it
// (UNSUPPORTED_RESULT_TYPE). The script reads the handle from that response
// as it arrives on the transport, and reports the rejection.
//
// Exit codes: 0 report printed, 1 failure (in the report), 2 usage error.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const [url, secondsArg, seedArg, longArg] = process.argv.slice(2);
const seconds = Number(secondsArg);
const seed = Number(seedArg);
const longSeconds = Number(longArg);
if (!url || !(seconds > 0) || !Number.isInteger(seed) || !(longSeconds > 0)) {
  console.error('usage: node ts-tasks.mjs <endpoint-url> <seconds> <seed> <long-seconds>');
  process.exit(2);
}

const TASKS = 'io.modelcontextprotocol/tasks';
const info = { name: 'funcmcp-e2e-ts-tasks', version: '1.0.0' };
const errorOf = (e) => ({
  code: typeof e?.code === 'number' || typeof e?.code === 'string' ? e.code : null,
  message: String(e?.message ?? e),
  ...(e?.data !== undefined ? { data: e.data } : {}),
});
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A Standard Schema (what request() takes for a method outside the era's
// registry) that accepts a JSON object holding the members named.
const objectWith = (...members) => ({
  '~standard': {
    version: 1,
    vendor: 'funcmcp-e2e',
    validate(value) {
      if (value === null || typeof value !== 'object' || Array.isArray(value)) return { issues: [{ message: 'not an object' }] };
      const missing = members.filter((m) => !(m in value));
      return missing.length ? { issues: [{ message: 'missing ' + missing.join(', ') }] } : { value };
    },
  },
});
const TaskSchema = objectWith('taskId', 'status', 'createdAt', 'lastUpdatedAt', 'ttlMs', 'pollIntervalMs');
const AnySchema = objectWith();

// connect starts a client negotiating 2026-07-28; withTasks declares the
// tasks extension. Task results of tools/call are kept by request id as
// they arrive.
async function connect(withTasks) {
  const capabilities = withTasks ? { extensions: { [TASKS]: {} } } : {};
  const client = new Client(info, { capabilities, versionNegotiation: { mode: 'auto' } });
  const transport = new StreamableHTTPClientTransport(new URL(url));
  await client.connect(transport);
  const taskResults = [];
  const onmessage = transport.onmessage;
  transport.onmessage = (m, extra) => {
    if (m.result?.resultType === 'task') taskResults.push(m.result);
    return onmessage(m, extra);
  };
  return { client, taskResults };
}

// callForTask calls the tool and returns the task handle the server
// answered with and what the client made of that answer.
async function callForTask(c, args) {
  const before = c.taskResults.length;
  let callResult = null;
  let callError = null;
  try {
    callResult = await c.client.callTool({ name: 'simulate_epidemic', arguments: args });
  } catch (e) {
    callError = errorOf(e);
  }
  return { handle: c.taskResults[before] ?? null, callResult, callError };
}

const getTask = (c, taskId) => c.client.request({ method: 'tasks/get', params: { taskId } }, TaskSchema);
const cancelTask = (c, taskId) => c.client.request({ method: 'tasks/cancel', params: { taskId } }, AnySchema);
const terminal = (status) => ['completed', 'failed', 'cancelled'].includes(status);

const report = {
  protocolVersion: null,
  serverExtensions: null,
  task: null,
  sync: null,
  cancel: null,
  error: null,
};
let exitCode = 0;
const clients = [];
try {
  const tasked = await connect(true);
  clients.push(tasked);
  const plain = await connect(false);
  clients.push(plain);
  report.protocolVersion = tasked.client.getNegotiatedProtocolVersion() ?? null;
  report.serverExtensions = tasked.client.getServerCapabilities()?.extensions ?? null;
  const args = { duration_seconds: seconds, seed };

  // The same call without the extension runs synchronously, alongside.
  const sync = (async () => {
    try {
      const result = await plain.client.callTool({ name: 'simulate_epidemic', arguments: args });
      return { protocolVersion: plain.client.getNegotiatedProtocolVersion() ?? null, result, taskResults: plain.taskResults.length };
    } catch (e) {
      return { error: errorOf(e) };
    }
  })();

  const task = { ...(await callForTask(tasked, args)), polls: [], final: null };
  report.task = task;
  if (task.handle) {
    // Poll as the server asks, bounded well past the run's length.
    let interval = task.handle.pollIntervalMs;
    for (let i = 0; i < 4 * seconds + 20; i++) {
      await sleep(interval);
      const t = await getTask(tasked, task.handle.taskId);
      task.polls.push({ status: t.status, statusMessage: t.statusMessage ?? null });
      interval = t.pollIntervalMs;
      if (terminal(t.status)) {
        task.final = t;
        break;
      }
    }
  }
  report.sync = await sync;

  // A long run, cancelled as soon as it is seen working.
  const cancel = { ...(await callForTask(tasked, { ...args, duration_seconds: longSeconds })), before: null, cancelResult: null, after: null };
  report.cancel = cancel;
  if (cancel.handle) {
    cancel.before = await getTask(tasked, cancel.handle.taskId);
    cancel.cancelResult = await cancelTask(tasked, cancel.handle.taskId);
    cancel.after = await getTask(tasked, cancel.handle.taskId);
  }
} catch (e) {
  report.error = errorOf(e);
  exitCode = 1;
} finally {
  for (const c of clients) {
    try {
      await c.client.close();
    } catch {}
  }
}
console.log(JSON.stringify(report));
process.exit(exitCode);
