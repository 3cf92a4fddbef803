// The campus identity provider of the OIDC tests: panva's oidc-provider (npm, certified OP) on
// loopback, configured from a JSON file the test writes (tests/support/oidc_idp.py):
//   { "port", "clients": [...], "accounts": {id: {"claims": {...}, "userinfo_only": bool}},
//     "keys_file": path of a JWKS with private keys (the first key signs) }
// POST /__test/rotate re-reads keys_file: the provider signs with its new first key from then on,
// as an IdP does after a key rollover. Sign-in uses oidc-provider's own login and consent pages
// (devInteractions): any password is accepted for an account in the file; an unknown login is
// refused by findAccount.
import fs from 'node:fs';
import http from 'node:http';
import { pathToFileURL } from 'node:url';

// The package lives in .node/ (scripts/oidc_provider.sh), not beside this file: its folder is argv[3].
const { default: Provider } = await import(pathToFileURL(`${process.argv[3]}/lib/index.js`).href);

const config = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const issuer = `http://127.0.0.1:${config.port}`;

// oidc-provider's own memory adapter keeps one store per process, so a rotation (a new Provider)
// keeps grants and sessions.

async function findAccount(ctx, id) {
  const account = config.accounts[id];
  if (!account) return undefined;
  return {
    accountId: id,
    async claims(use) {
      // An account whose profile lives in userinfo only: its ID token says who, nothing more.
      if (use === 'id_token' && account.userinfo_only) return { sub: id };
      return { sub: id, ...account.claims };
    },
  };
}

function makeProvider() {
  const jwks = JSON.parse(fs.readFileSync(config.keys_file, 'utf8'));
  const provider = new Provider(issuer, {
    clients: config.clients,
    jwks,
    findAccount,
    claims: {
      openid: ['sub'],
      // As the recipes' providers release them: Entra ID's groups claim comes with the token
      // configuration (no scope of its own), Google's hd with email.
      profile: ['name', 'preferred_username', 'groups'],
      email: ['email', 'hd'],
      groups: ['groups'],
      campus: ['uin', 'eduPersonPrincipalName', 'eduPersonAffiliation'],
    },
    scopes: ['openid', 'offline_access', 'profile', 'email', 'groups', 'campus'],
    // The profile claims go into the ID token too (as Entra, Okta and Google do), except for an
    // account marked userinfo_only above.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: true }, rpInitiatedLogout: { enabled: true } },
    cookies: { keys: ['campus-mcp-test-idp'] },
  });
  provider.on('server_error', (ctx, err) => console.error('server_error', err));
  return provider;
}

let provider = makeProvider();
const server = http.createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/__test/rotate') {
    provider = makeProvider();
    res.writeHead(204).end();
    return;
  }
  provider.callback()(req, res);
});
server.listen(config.port, '127.0.0.1', () => console.log(`oidc-provider listening on ${issuer}`));
