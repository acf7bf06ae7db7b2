import { Inject, Injectable, Logger } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import { BaseClient, errors, generators, Issuer } from 'openid-client';
import { UsersService, UserView } from '../accounts/users.service';
import { APP_CONFIG, AppConfig, dashboardUrlOf } from '../config/app-config';

/** What the browser carries from the start of a sign-in to its callback (cookie `glimpse_oidc`, 10 min). */
export interface OidcFlow {
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** Lifetime of the flow cookie, s. */
export const OIDC_FLOW_TTL_S = 600;

/** Why an OpenID Connect sign-in did not sign anyone in; its message is shown on the error page. */
export class OidcSignInError extends Error {}

/**
 * Optional OpenID Connect sign-in (docs/dashboard.md, "Single sign-on": `OIDC_ISSUER`, `OIDC_CLIENT_ID`, `OIDC_CLIENT_SECRET`):
 * authorization code flow with PKCE, state and nonce, through `openid-client`. The provider's verified
 * email picks the Glimpse user; nobody is created this way (users come from the CLI, invites or
 * sign-up). openid-client 5 is used because 6 is ESM-only and the service and its tests are CommonJS.
 */
@Injectable()
export class DashboardOidcService {
  private readonly logger = new Logger('DashboardOidc');
  private client: Promise<BaseClient> | null = null;

  constructor(
    private readonly users: UsersService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Whether OIDC sign-in is configured. */
  get enabled(): boolean {
    return this.config.oidc !== null;
  }

  /** The redirect URI registered with the provider: `{DASHBOARD_URL}/oidc/callback`. */
  get redirectUri(): string {
    return `${dashboardUrlOf(this.config)}/oidc/callback`;
  }

  /** The provider's authorization URL for a new sign-in and the flow to keep until the callback. */
  async start(): Promise<{ url: string; flow: OidcFlow }> {
    const client = await this.getClient();
    const flow: OidcFlow = { state: generators.state(), nonce: generators.nonce(), codeVerifier: generators.codeVerifier() };
    const url = client.authorizationUrl({
      scope: 'openid email',
      state: flow.state,
      nonce: flow.nonce,
      code_challenge: generators.codeChallenge(flow.codeVerifier),
      code_challenge_method: 'S256',
    });
    return { url, flow };
  }

  /**
   * Completes a sign-in at the callback: exchanges the code, checks state, nonce and the ID token, and
   * returns the user whose email the provider verified (`email_verified: true`, not merely absent).
   * Throws {@link OidcSignInError}.
   */
  async finish(req: IncomingMessage, flow: OidcFlow | null): Promise<UserView> {
    if (!flow) throw new OidcSignInError('This sign-in took too long or was started in another browser. Try again.');
    const client = await this.getClient();
    let claims: Record<string, unknown>;
    try {
      const tokens = await client.callback(this.redirectUri, client.callbackParams(req), {
        state: flow.state,
        nonce: flow.nonce,
        code_verifier: flow.codeVerifier,
      });
      claims = tokens.claims();
      // Providers that keep the ID token small return the email from the userinfo endpoint (the
      // library checks that its `sub` is the ID token's).
      if (typeof claims.email !== 'string' && tokens.access_token) claims = { ...claims, ...(await client.userinfo(tokens)) };
    } catch (err) {
      if (err instanceof errors.OPError || err instanceof errors.RPError) {
        this.logger.warn(`OpenID Connect sign-in refused: ${err.message}`);
        throw new OidcSignInError('The identity provider did not confirm this sign-in. Try again.');
      }
      throw err;
    }
    const email = typeof claims.email === 'string' ? claims.email : null;
    // Only an explicit `email_verified: true` links the provider's account to a Glimpse user
    // (CONTRACT.md, "Dashboard"): providers that omit the claim, or send it as a string, may let
    // anyone type any address.
    if (!email || claims.email_verified !== true)
      throw new OidcSignInError('The identity provider did not share a verified email address.');
    const user = await this.users.findByEmail(email);
    if (!user) throw new OidcSignInError(`There is no Glimpse user for ${email}. Ask an owner of your account for an invite.`);
    return user;
  }

  private getClient(): Promise<BaseClient> {
    const oidc = this.config.oidc;
    if (!oidc) throw new OidcSignInError('Single sign-on is not configured.');
    this.client ??= Issuer.discover(oidc.issuer).then(
      (issuer) =>
        new issuer.Client({
          client_id: oidc.clientId,
          client_secret: oidc.clientSecret,
          redirect_uris: [this.redirectUri],
          response_types: ['code'],
        }),
      (err) => {
        this.client = null;
        this.logger.error(`OpenID Connect discovery of ${oidc.issuer} failed: ${(err as Error).message}`);
        throw new OidcSignInError('The identity provider cannot be reached. Try again later.');
      },
    );
    return this.client;
  }
}
