import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import type { TestApp } from './test-app';

// oidc-provider 7 (CommonJS, no bundled types): the identity provider, on loopback, for the tests only.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Provider } = require('oidc-provider');

/** The client the dashboard is configured with (`OIDC_CLIENT_ID`, `OIDC_CLIENT_SECRET`). */
export const OIDC_CLIENT = { id: 'glimpse-dashboard', secret: 'a-client-secret-for-tests' };

/** An OpenID Connect provider on 127.0.0.1 and the test app that signs in through it. */
export interface OidcProviderOnLoopback {
  issuer: string;
  app: TestApp;
  close(): Promise<void>;
}

/**
 * Starts oidc-provider on a loopback port, then the app (`startApp(env)`, given `OIDC_ISSUER`,
 * `OIDC_CLIENT_ID` and `OIDC_CLIENT_SECRET`), then mounts the provider with the app's callback URL.
 * Dev interactions: any login name signs in and is the account id; `claimsOf(id)` gives the claims
 * beyond `sub` (e.g. `{ email, email_verified }`). `close()` stops the provider only.
 */
export async function startOidcProvider(
  claimsOf: (id: string) => Record<string, unknown>,
  startApp: (env: Record<string, string>) => Promise<TestApp>,
): Promise<OidcProviderOnLoopback> {
  // The provider's port must be known before the app starts (OIDC_ISSUER); its handler is mounted
  // once the app's callback URL is known.
  let handler: Parameters<typeof createServer>[1] = (_req, res) => res.writeHead(503).end();
  const idp: Server = createServer((req, res) => handler!(req, res));
  await new Promise<void>((resolve) => idp.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
  const app = await startApp({ OIDC_ISSUER: issuer, OIDC_CLIENT_ID: OIDC_CLIENT.id, OIDC_CLIENT_SECRET: OIDC_CLIENT.secret });
  // The provider's quick-start warnings (in-memory adapter, dev keys, dev interactions) are expected here.
  const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: OIDC_CLIENT.id,
        client_secret: OIDC_CLIENT.secret,
        redirect_uris: [`${app.baseUrl}/dashboard/oidc/callback`],
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    findAccount: async (_ctx: unknown, id: string) => ({ accountId: id, claims: async () => ({ sub: id, ...claimsOf(id) }) }),
    claims: { openid: ['sub'], email: ['email', 'email_verified'] },
    pkce: { required: () => true, methods: ['S256'] },
    cookies: { keys: ['oidc-test-cookie-key'] },
    ttl: { AccessToken: 600, AuthorizationCode: 60, IdToken: 600, Interaction: 600, Session: 600, Grant: 600 },
  });
  warn.mockRestore();
  handler = provider.callback();
  return { issuer, app, close: () => new Promise<void>((resolve) => idp.close(() => resolve())) };
}
