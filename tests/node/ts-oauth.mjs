// ts-oauth.mjs drives an official MCP TypeScript client through the MCP
// authorization flow against a server that asks for OAuth access tokens,
// and prints one JSON report on stdout. The Go end-to-end tests run it.
//
//   node ts-oauth.mjs <endpoint-url> <client-id> <redirect-uri> '<calls JSON>' [v1|v2]
//
// The client is pre-registered (<client-id>, a public client with
// <redirect-uri>): no dynamic registration. Its first request gets 401; the
// SDK reads the protected resource metadata, discovers the authorization
// server and builds the authorization URL (PKCE S256, resource indicator,
// scopes). No browser: redirectToAuthorization requests that URL itself,
// reads the code from the redirect's Location, and the script hands it to
// transport.finishAuth, which exchanges it (with the PKCE verifier), then
// connects again with the token, lists the tools and calls each of <calls
// JSON> ([{"name":…, "arguments":{…}}]). [v1|v2] picks
// @modelcontextprotocol/sdk 1.x (default) or @modelcontextprotocol/client 2.x.
//
// Exit codes: 0 report printed, 1 flow failure (report still printed), 2
// usage error.
const [url, clientId, redirectUri, callsArg = '[]', clientArg = 'v1'] = process.argv.slice(2);
if (!url || !clientId || !redirectUri || !['v1', 'v2'].includes(clientArg)) {
  console.error('usage: node ts-oauth.mjs <endpoint-url> <client-id> <redirect-uri> [calls-json] [v1|v2]');
  process.exit(2);
}
const calls = JSON.parse(callsArg);

const errorOf = (e) => ({
  code: typeof e?.code === 'number' ? e.code : null,
  name: e?.name ?? null,
  message: String(e?.message ?? e),
});

const v2 = clientArg === 'v2';
const { Client, StreamableHTTPClientTransport, UnauthorizedError } = v2
  ? await import('@modelcontextprotocol/client')
  : {
      ...(await import('@modelcontextprotocol/sdk/client/index.js')),
      ...(await import('@modelcontextprotocol/sdk/client/streamableHttp.js')),
      ...(await import('@modelcontextprotocol/sdk/client/auth.js')),
    };

const report = {
  client: clientArg,
  authorizationUrl: null,
  code: false,
  firstConnectError: null,
  tokenType: null,
  scope: null,
  connected: false,
  tools: null,
  calls: [],
  error: null,
};

// The provider keeps everything in memory; the authorization server's
// answer is read here instead of by a browser.
let tokens;
let verifier;
let clientInfo = { client_id: clientId };
let code;
let callback; // the redirect's query: code, state, iss (RFC 9207)
let discovery;
// finish exchanges the code of the last redirect: 2.x takes the whole
// callback query so that it checks iss, 1.x the code.
const finish = (transport) => transport.finishAuth(v2 ? callback : code);
const provider = {
  get redirectUrl() {
    return redirectUri;
  },
  get clientMetadata() {
    return { client_name: 'funcmcp-e2e-oauth', redirect_uris: [redirectUri], grant_types: ['authorization_code'],
      response_types: ['code'], token_endpoint_auth_method: 'none' };
  },
  state: () => 'e2e-state',
  clientInformation: () => clientInfo,
  saveClientInformation: (info) => {
    clientInfo = info;
  },
  tokens: () => tokens,
  saveTokens: (t) => {
    tokens = t;
  },
  saveCodeVerifier: (v) => {
    verifier = v;
  },
  codeVerifier: () => verifier,
  saveDiscoveryState: (d) => {
    discovery = d;
  },
  discoveryState: () => discovery,
  redirectToAuthorization: async (authorizationUrl) => {
    report.authorizationUrl = String(authorizationUrl);
    const resp = await fetch(authorizationUrl, { redirect: 'manual' });
    const location = resp.headers.get('location');
    if (resp.status !== 302 || !location) {
      throw new Error(`the authorization endpoint answered ${resp.status}: ${await resp.text()}`);
    }
    const back = new URL(location);
    if (back.searchParams.get('state') !== 'e2e-state') {
      throw new Error(`the redirect lost the state: ${location}`);
    }
    callback = back.searchParams;
    code = back.searchParams.get('code');
    if (!code) {
      throw new Error(`the redirect carries no code: ${location}`);
    }
    report.code = true;
  },
};

let exitCode = 0;
let client;
try {
  const info = { name: 'funcmcp-e2e-ts-oauth', version: '1.0.0' };
  client = new Client(info);
  let transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
  try {
    await client.connect(transport);
  } catch (e) {
    report.firstConnectError = errorOf(e);
    if (!(e instanceof UnauthorizedError) || !code) {
      throw e;
    }
    await finish(transport);
    report.tokenType = tokens?.token_type ?? null;
    report.scope = tokens?.scope ?? null;
    client = new Client(info);
    transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider });
    await client.connect(transport);
  }
  report.connected = true;
  report.tools = (await client.listTools()).tools.map((t) => t.name);
  for (const call of calls) {
    const entry = { name: call.name, ok: false, steppedUp: false };
    report.calls.push(entry);
    const params = { name: call.name, arguments: call.arguments ?? {} };
    code = undefined;
    try {
      entry.result = await client.callTool(params);
      entry.ok = true;
    } catch (e) {
      entry.error = errorOf(e);
      // 403 insufficient_scope: the SDK asked for a token with the scopes
      // the challenge names (step-up); finish that flow and call again.
      if (e instanceof UnauthorizedError && code) {
        entry.steppedUp = true;
        try {
          await finish(transport);
          entry.scope = tokens?.scope ?? null;
          entry.result = await client.callTool(params);
          entry.ok = true;
          delete entry.error;
        } catch (e2) {
          entry.error = errorOf(e2);
        }
      }
    }
  }
} catch (e) {
  report.error = errorOf(e);
  exitCode = 1;
} finally {
  try {
    await client?.close();
  } catch {
    // best effort
  }
}
process.stdout.write(JSON.stringify(report) + '\n');
process.exit(exitCode);
