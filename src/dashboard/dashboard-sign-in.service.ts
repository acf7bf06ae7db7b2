import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { PostgresRateLimiter } from '../common/postgres-rate-limiter';
import { UserError, UsersService, UserView } from '../accounts/users.service';
import { ClientInfo, DashboardSessionsService, SIGN_IN_WINDOW_MS, SignInLimit } from './dashboard-sessions.service';
import type { FormResult } from './dashboard.service';
import { signInClientKey } from './sign-in-client-key';

/** Sign-up attempts per client (IPv4 address or IPv6 /64) per hour, whatever their outcome. */
export const SIGN_UP_LIMIT = { name: 'signup', points: 10, durationS: 3600 };

/** Outcome of a sign-up: done (the same whether or not the email was known; no session), a form error, or limited. */
export type SignUpOutcome = FormResult<null> | { kind: 'limited'; retryAfterS: number };

/** Outcome of a sign-in attempt. */
export type SignInOutcome =
  { kind: 'signed-in'; token: string } | { kind: 'failed' } | { kind: 'limited'; limit: SignInLimit; retryAfterS: number };

/**
 * Sign-in, sign-up, set-password and sign-out flows: credentials through {@link UsersService},
 * sessions through {@link DashboardSessionsService}. Each success replaces any session the browser
 * had with a new one (session fixation).
 */
@Injectable()
export class DashboardSignInService {
  private readonly signUpLimiter: PostgresRateLimiter;

  constructor(
    private readonly users: UsersService,
    private readonly sessions: DashboardSessionsService,
    dataSource: DataSource,
  ) {
    this.signUpLimiter = new PostgresRateLimiter(dataSource, SIGN_UP_LIMIT);
  }

  /**
   * Checks the credentials and starts a session on success. The attempt is counted as a failure
   * before the password is checked (per email and per client, CONTRACT.md, "Dashboard"), and released
   * when it was right; past a limit the password is not checked at all, so even the right one is
   * refused until the window has passed.
   */
  async signIn(email: string, password: string, previousToken: string | null, client: ClientInfo): Promise<SignInOutcome> {
    const claim = await this.sessions.claimSignInAttempt(client.ip, email);
    if ('limited' in claim) return { kind: 'limited', limit: claim.limited, retryAfterS: SIGN_IN_WINDOW_MS / 1000 };
    const user = await this.users.verifyCredentials(email, password);
    if (!user) return { kind: 'failed' };
    await this.sessions.releaseSignInAttempt(client.ip, email, claim.attemptId);
    return { kind: 'signed-in', token: await this.replaceSession(user, previousToken, client) };
  }

  /**
   * Sign-up (when `DASHBOARD_SIGNUP=true`): a new free account and its owner user, at most
   * {@link SIGN_UP_LIMIT} attempts per client. It starts no session, and an email that already has a
   * user or an account gets the same outcome with nothing created, so the answer never tells whether
   * an email is known; the new user then signs in (CONTRACT.md, "Dashboard"). A form error (invalid
   * email, password outside the rules) depends only on the input.
   */
  async signUp(email: string, password: string, client: ClientInfo): Promise<SignUpOutcome> {
    const decision = await this.signUpLimiter.consume(signInClientKey(client.ip));
    if (!decision.allowed) return { kind: 'limited', retryAfterS: decision.retryAfterS };
    try {
      await this.users.signUp(email, password);
      return { ok: true, value: null };
    } catch (err) {
      if (err instanceof UserError) return { ok: false, error: err.message };
      throw err;
    }
  }

  /** The user of a set-password link while it is valid. */
  userOfLink(token: string): Promise<UserView | null> {
    return this.users.userOfLink(token);
  }

  /**
   * Sets the password through a one-time link, ends every session the user had (a reset: CONTRACT.md,
   * "Dashboard"), and signs the user in.
   */
  async setPassword(
    token: string,
    password: string,
    confirmation: string,
    previousToken: string | null,
    client: ClientInfo,
  ): Promise<FormResult<string>> {
    if (password !== confirmation) return { ok: false, error: 'The passwords do not match.' };
    try {
      const user = await this.users.setPasswordWithLink(token, password);
      await this.sessions.endAllOf(user.id);
      return { ok: true, value: await this.replaceSession(user, previousToken, client) };
    } catch (err) {
      if (err instanceof UserError) return { ok: false, error: err.message };
      throw err;
    }
  }

  /** Starts a session for a user the identity provider vouched for (OpenID Connect). */
  signInVerified(user: UserView, previousToken: string | null, client: ClientInfo): Promise<string> {
    return this.replaceSession(user, previousToken, client);
  }

  /** Ends the browser's session, if any. */
  async signOut(token: string | null): Promise<void> {
    if (token) await this.sessions.end(token);
  }

  private async replaceSession(user: UserView, previousToken: string | null, client: ClientInfo): Promise<string> {
    if (previousToken) await this.sessions.end(previousToken);
    return this.sessions.start(user, client);
  }
}
