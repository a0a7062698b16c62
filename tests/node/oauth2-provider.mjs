// oauth2-provider.mjs runs an OpenID provider on 127.0.0.1 for trying
// funchost's access tokens locally: the npm package oauth2-mock-server (real
// keys, discovery, JWKS, authorization code with PKCE, refresh tokens),
// configured as a provider must be for MCP clients. docs/security.md ("With
// any OpenID provider, locally") uses it, and the Go end-to-end tests run it.
//
//   node oauth2-provider.mjs --resource <url> --client <id>=<redirect-uri>
//        [--refreshing-client <id>=<redirect-uri>] [--port <n>]
//        [--subject <sub>] [--exit-with-stdin]
//
// What it adds to oauth2-mock-server, which accepts any client and puts
// neither an audience nor the authorized scopes in its access tokens:
//
//   - Pre-registered public clients: /authorize and /token refuse a client
//     id that is not registered, or a redirect URI other than the client's;
//     /authorize asks for PKCE with S256.
//   - Resources (APIs), --resource, repeatable: the resource indicator
//     (RFC 8707) a client sends must be one of them, and the access token's
//     aud is the one authorized (the first one when the client sends
//     none), as MCP clients expect.
//   - The access token's scope is the scope authorized at /authorize; a
//     refresh grant keeps it (a refresh grant never widens a grant).
//   - Refresh tokens only for --refreshing-client clients.
//   - Every signed-in user is --subject (default "johndoe"): the
//     authorization endpoint approves at once, with no login page.
//
// It prints {"issuer":"http://127.0.0.1:<port>",…} on its first line, then
// one JSON line per authorization or token request, and runs until SIGINT,
// SIGTERM or, with --exit-with-stdin, until its standard input closes.
//
// Exit codes: 0 stopped, 2 usage error.
import { OAuth2Server, Events } from 'oauth2-mock-server';

const usage = () => {
  console.error('usage: node oauth2-provider.mjs --resource <url> --client <id>=<redirect-uri> ' +
    '[--refreshing-client <id>=<redirect-uri>] [--port <n>] [--subject <sub>] [--exit-with-stdin]');
  process.exit(2);
};

const opts = { port: 0, resources: [], subject: 'johndoe', clients: new Map(), exitWithStdin: false };
const args = process.argv.slice(2);
while (args.length > 0) {
  const arg = args.shift();
  const value = () => args.shift() ?? usage();
  switch (arg) {
    case '--port':
      opts.port = Number.parseInt(value(), 10);
      break;
    case '--resource':
      opts.resources.push(value());
      break;
    case '--subject':
      opts.subject = value();
      break;
    case '--client':
    case '--refreshing-client': {
      const [id, redirectUri] = value().split(/=(.*)/s);
      if (!id || !redirectUri) usage();
      opts.clients.set(id, { redirectUri, refresh: arg === '--refreshing-client' });
      break;
    }
    case '--exit-with-stdin':
      opts.exitWithStdin = true;
      break;
    default:
      usage();
  }
}
if (opts.resources.length === 0 || opts.clients.size === 0 || !Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) {
  usage();
}

const log = (entry) => process.stdout.write(JSON.stringify(entry) + '\n');

// grants: what an authorization code or a refresh token stands for.
const grants = new Map();

const server = new OAuth2Server();
await server.issuer.keys.generate('RS256');
const service = server.service;

service.on(Events.BeforeAuthorizeRedirect, (redirect, req) => {
  const q = req.query;
  const code = redirect.url.searchParams.get('code');
  const client = opts.clients.get(q.client_id);
  let error;
  if (!client || client.redirectUri !== q.redirect_uri) {
    error = 'unauthorized_client';
  } else if (q.code_challenge_method !== 'S256') {
    error = 'invalid_request';
  } else if (q.resource !== undefined && !opts.resources.includes(q.resource)) {
    error = 'invalid_target';
  }
  if (!code) {
    error ??= 'unsupported_response_type';
  }
  log({ event: 'authorize', clientId: q.client_id ?? null, scope: q.scope ?? '', resource: q.resource ?? null,
    codeChallengeMethod: q.code_challenge_method ?? null, error: error ?? null });
  if (error) {
    redirect.url.searchParams.delete('code');
    redirect.url.searchParams.set('error', error);
    return;
  }
  grants.set(code, { clientId: q.client_id, scope: q.scope ?? '', resource: q.resource ?? opts.resources[0] });
});

// grantOf returns the grant a token request redeems, or the OAuth error.
const grantOf = (body) => {
  const client = opts.clients.get(body.client_id);
  if (!client) return { error: 'invalid_client' };
  let grant;
  if (body.grant_type === 'authorization_code') {
    grant = grants.get(body.code);
    // The package checks code_verifier against the challenge when both
    // are there; every code here was issued with one.
    if (grant && (body.redirect_uri !== client.redirectUri || !body.code_verifier)) return { error: 'invalid_grant' };
  } else if (body.grant_type === 'refresh_token') {
    grant = grants.get(body.refresh_token);
  } else {
    return { error: 'unsupported_grant_type' };
  }
  if (!grant || grant.clientId !== body.client_id) return { error: 'invalid_grant' };
  if (body.resource !== undefined && body.resource !== grant.resource) return { error: 'invalid_target' };
  return { grant, client };
};

service.on(Events.BeforeTokenSigning, (token, req) => {
  token.payload.sub = opts.subject;
  if (!('scope' in token.payload)) {
    return; // the ID token: aud is the client
  }
  const { grant } = grantOf(req.body);
  token.payload.aud = grant?.resource ?? opts.resources[0];
  token.payload.scope = grant?.scope ?? '';
  token.payload.client_id = req.body.client_id;
});

service.on(Events.BeforeResponse, (response, req) => {
  const body = req.body;
  const { grant, client, error } = grantOf(body);
  if (error) {
    response.statusCode = 400;
    response.body = { error };
  } else {
    if (body.grant_type === 'authorization_code') {
      grants.delete(body.code); // a code is used once
    }
    response.body.scope = grant.scope;
    if (client.refresh && response.body.refresh_token) {
      grants.set(response.body.refresh_token, grant);
    } else {
      delete response.body.refresh_token;
    }
  }
  log({ event: 'token', grantType: body.grant_type ?? null, clientId: body.client_id ?? null,
    resource: body.resource ?? null, scope: response.body.scope ?? null,
    refreshToken: Boolean(response.body.refresh_token), error: error ?? null });
});

await server.start(opts.port, '127.0.0.1');
// The package names a loopback issuer "localhost"; the issuer is the
// address it listens on.
server.issuer.url = `http://127.0.0.1:${server.address().port}`;
log({ issuer: server.issuer.url, resources: opts.resources, subject: opts.subject });

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await server.stop();
  process.exit(0);
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
if (opts.exitWithStdin) {
  process.stdin.on('end', stop);
  process.stdin.on('close', stop);
  process.stdin.resume();
}
