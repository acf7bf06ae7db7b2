import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { LessThan, MoreThan, Not, Repository } from 'typeorm';
import { UserView, UsersService } from '../accounts/users.service';
import { sha256Hex as sha256 } from '../common/hashing';
import { Clock } from '../common/clock';
import { newId } from '../common/ids';
import { DashboardSession } from './dashboard-session.entity';
import { SignInFailure } from './sign-in-failure.entity';
import { signInClientKey } from './sign-in-client-key';

/** A session ends after this long without a request, ms (CONTRACT.md, "Dashboard": 12 h idle). */
export const SESSION_IDLE_MS = 12 * 3600 * 1000;
/** A session ends this long after it started, whatever its activity, ms (CONTRACT.md, "Dashboard": 7 days). */
export const SESSION_MAX_AGE_MS = 7 * 24 * 3600 * 1000;
/** `last_seen_at` is written at most this often per session, ms. */
const TOUCH_RESOLUTION_MS = 60_000;
/** Failed sign-ins per email address, whatever the IP (CONTRACT.md, "Dashboard": 10 in 15 min). */
export const SIGN_IN_MAX_FAILURES = 10;
/**
 * Failed sign-ins per client (an IPv4 address, an IPv6 /64), whatever the emails (one address
 * spraying many emails), in the same window (CONTRACT.md, "Dashboard": 50 in 15 min).
 */
export const SIGN_IN_MAX_FAILURES_PER_IP = 50;
export const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;
/** First key of the PostgreSQL advisory locks that serialise sign-in attempts per email and per client. */
const SIGN_IN_LOCK_CLASS = 0x5167;

/** Which sign-in limit a request hit: this email (from any client), or this client (any emails). */
export type SignInLimit = 'email' | 'ip';

/** A sign-in attempt counted as a failure before its password is checked; released when it succeeds. */
export type SignInClaim = { attemptId: string } | { limited: SignInLimit };

/** Where a request comes from, as recorded with a session. */
export interface ClientInfo {
  ip: string;
  userAgent: string;
}

/** A signed-in request's identity. */
export interface SignedIn {
  user: UserView;
  sessionId: string;
  csrfToken: string;
}

/** A session as the Account page lists it. */
export interface SessionView {
  id: string;
  userAgent: string;
  ip: string;
  createdAt: Date;
  lastSeenAt: Date;
  current: boolean;
}

/**
 * Server-side dashboard sessions in PostgreSQL (CONTRACT.md, "Dashboard") and the sign-in rate limit.
 * The cookie holds a 256-bit random token; only its SHA-256 is stored. Written here rather than with
 * express-session because the Account page lists and ends a user's sessions, which needs sessions
 * indexed by user, and every sign-in must start a fresh session (no fixation).
 */
@Injectable()
export class DashboardSessionsService {
  constructor(
    @InjectRepository(DashboardSession) private readonly sessions: Repository<DashboardSession>,
    @InjectRepository(SignInFailure) private readonly failures: Repository<SignInFailure>,
    private readonly users: UsersService,
    private readonly clock: Clock,
  ) {}

  /** Starts a new session for the user (sign-in, sign-up, set password) and returns its cookie token. */
  async start(user: UserView, client: ClientInfo): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    // Expired sessions (anyone's) are removed here rather than by a timer: sign-ins are rare.
    await this.sessions.delete({ lastSeenAt: LessThan(new Date(now.getTime() - SESSION_IDLE_MS)) });
    await this.sessions.delete({ createdAt: LessThan(new Date(now.getTime() - SESSION_MAX_AGE_MS)) });
    await this.sessions.insert({
      id: newId('session'),
      tokenHash: sha256(token),
      userId: user.id,
      csrfToken: randomBytes(32).toString('base64url'),
      userAgent: client.userAgent.slice(0, 256),
      ip: client.ip.slice(0, 64),
      createdAt: now,
      lastSeenAt: now,
    });
    return token;
  }

  /**
   * The signed-in identity of a cookie token, or null (unknown, idle-expired, older than
   * {@link SESSION_MAX_AGE_MS}, or the user is gone).
   */
  async resolve(token: string): Promise<SignedIn | null> {
    const now = this.clock.now();
    const session = await this.sessions.findOneBy({
      tokenHash: sha256(token),
      lastSeenAt: MoreThan(new Date(now.getTime() - SESSION_IDLE_MS)),
      createdAt: MoreThan(new Date(now.getTime() - SESSION_MAX_AGE_MS)),
    });
    if (!session) return null;
    const user = await this.users.find(session.userId);
    if (!user) return null;
    if (now.getTime() - session.lastSeenAt.getTime() >= TOUCH_RESOLUTION_MS) {
      await this.sessions.update({ id: session.id }, { lastSeenAt: now });
    }
    return { user, sessionId: session.id, csrfToken: session.csrfToken };
  }

  /** Ends the session of a cookie token (sign-out, or before a new sign-in). */
  async end(token: string): Promise<void> {
    await this.sessions.delete({ tokenHash: sha256(token) });
  }

  /**
   * Ends every session of the user (a password set through a link) or every one but `keepSessionId`
   * (a password changed while signed in); CONTRACT.md, "Dashboard".
   */
  async endAllOf(userId: string, keepSessionId?: string): Promise<void> {
    await this.sessions.delete(keepSessionId ? { userId, id: Not(keepSessionId) } : { userId });
  }

  /** The user's active sessions, most recently used first. */
  async list(userId: string, currentSessionId: string): Promise<SessionView[]> {
    const now = this.clock.now().getTime();
    const rows = await this.sessions.find({
      where: { userId, lastSeenAt: MoreThan(new Date(now - SESSION_IDLE_MS)), createdAt: MoreThan(new Date(now - SESSION_MAX_AGE_MS)) },
      order: { lastSeenAt: 'DESC' },
    });
    return rows.map((s) => ({
      id: s.id,
      userAgent: s.userAgent,
      ip: s.ip,
      createdAt: s.createdAt,
      lastSeenAt: s.lastSeenAt,
      current: s.id === currentSessionId,
    }));
  }

  /** Ends one of the user's sessions; false when the user has no such session (404). */
  async revoke(userId: string, sessionId: string): Promise<boolean> {
    const result = await this.sessions.delete({ id: sessionId, userId });
    return Boolean(result.affected);
  }

  /** Whether the presented CSRF token is the session's (constant-time). */
  static csrfMatches(expected: string, presented: unknown): boolean {
    if (typeof presented !== 'string') return false;
    const a = Buffer.from(expected);
    const b = Buffer.from(presented);
    return a.length === b.length && timingSafeEqual(a, b);
  }

  /**
   * Counts one sign-in attempt as a failure, before its password is checked, unless the email or the
   * client is already at its limit ({@link SIGN_IN_MAX_FAILURES} per email from any client,
   * {@link SIGN_IN_MAX_FAILURES_PER_IP} per client key from {@link signInClientKey}, in the last
   * {@link SIGN_IN_WINDOW_MS}; CONTRACT.md, "Dashboard"). The check and the count are one transaction
   * serialised per email and per client by advisory locks (email first, then client, in every
   * attempt: no deadlock), so concurrent attempts never get more checks than the limit. A limited
   * attempt is counted nowhere. Call {@link releaseSignInAttempt} when the password was right.
   */
  async claimSignInAttempt(ip: string, email: string): Promise<SignInClaim> {
    const key = { ip: signInClientKey(ip), email: email.trim().toLowerCase().slice(0, 320) };
    const now = this.clock.now();
    const since = new Date(now.getTime() - SIGN_IN_WINDOW_MS);
    const claim = await this.failures.manager.transaction(async (m): Promise<SignInClaim> => {
      await m.query(`SELECT pg_advisory_xact_lock($1::int, hashtext($2))`, [SIGN_IN_LOCK_CLASS, `email:${key.email}`]);
      await m.query(`SELECT pg_advisory_xact_lock($1::int, hashtext($2))`, [SIGN_IN_LOCK_CLASS, `ip:${key.ip}`]);
      const [counts]: { email: number; ip: number }[] = await m.query(
        `SELECT (SELECT count(*) FROM sign_in_failures WHERE email = $1 AND failed_at > $3)::int AS email,
                (SELECT count(*) FROM sign_in_failures WHERE ip = $2 AND failed_at > $3)::int AS ip`,
        [key.email, key.ip, since],
      );
      if (counts.email >= SIGN_IN_MAX_FAILURES) return { limited: 'email' };
      if (counts.ip >= SIGN_IN_MAX_FAILURES_PER_IP) return { limited: 'ip' };
      const [row]: { id: string }[] = await m.query(
        `INSERT INTO sign_in_failures (email, ip, failed_at) VALUES ($1, $2, $3) RETURNING id`,
        [key.email, key.ip, now],
      );
      return { attemptId: String(row.id) };
    });
    // Failures older than the window (anyone's) are removed here rather than by a timer.
    if ('attemptId' in claim) await this.failures.delete({ failedAt: LessThan(since) });
    return claim;
  }

  /**
   * After a right password: forgets the attempt counted by {@link claimSignInAttempt} and the earlier
   * failures of this email from this client.
   */
  async releaseSignInAttempt(ip: string, email: string, attemptId: string): Promise<void> {
    await this.failures.delete({ id: attemptId });
    await this.failures.delete({ ip: signInClientKey(ip), email: email.trim().toLowerCase().slice(0, 320) });
  }
}
