// A small local OpenID Connect provider (panva's oidc-provider) for the console's sign-in
// tests. It runs in its own process because the package is ESM-only and the e2e suites
// are compiled to CommonJS. Protocol: prints {"issuer"} once listening, reads the client's
// redirect URIs as one line on stdin (separated by spaces), then prints {"ready":true}. Its development login
// form accepts any account name listed in ACCOUNTS (any password). Each further stdin line
// {"account": id, "claims": {...}} changes that account's claims and prints {"ok":true}.
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import Provider from 'oidc-provider';

const ACCOUNTS = {
  alice: { sub: 'alice', email: 'alice@example.com', email_verified: true },
  bob: { sub: 'bob', email: 'bob@example.com', email_verified: true, team: 'team-b' },
  nobody: { sub: 'nobody', email: 'nobody@example.com', email_verified: true },
  // Claims an admin's address (in other letters' case) that the provider never verified.
  mallory: { sub: 'mallory', email: 'ALICE@Example.com', email_verified: false },
};

let handler = (_req, res) => {
  res.statusCode = 503;
  res.end();
};
const server = createServer((req, res) => handler(req, res));
server.listen(0, '127.0.0.1', () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
  const lines = createInterface({ input: process.stdin });
  lines.once('line', (redirectUri) => {
    const provider = new Provider(issuer, {
      clients: [
        {
          client_id: 'gateway-console',
          client_secret: 'gateway-console-secret',
          redirect_uris: redirectUri.trim().split(/\s+/),
          grant_types: ['authorization_code'],
          response_types: ['code'],
        },
      ],
      pkce: { required: () => true },
      claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['team'] },
      conformIdTokenClaims: false,
      async findAccount(_ctx, id) {
        const account = ACCOUNTS[id];
        return account && { accountId: id, claims: () => account };
      },
      features: { devInteractions: { enabled: true } },
      cookies: { keys: ['test-only-cookie-key'] },
    });
    provider.on('server_error', (_ctx, err) => process.stderr.write(`${err.stack}\n`));
    handler = provider.callback();
    process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
    lines.on('line', (line) => {
      const { account, claims } = JSON.parse(line);
      ACCOUNTS[account] = { ...ACCOUNTS[account], ...claims };
      process.stdout.write(`${JSON.stringify({ ok: true })}\n`);
    });
  });
});
process.stdin.on('end', () => process.exit(0));
