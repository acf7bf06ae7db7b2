import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { LessThan, MoreThan, Repository } from 'typeorm';
import { sha256, UserView, UsersService } from '../accounts/users.service';
import { Clock } from '../common/clock';
import { newId } from '../common/ids';
import { DashboardSession } from './dashboard-session.entity';
import { SignInFailure } from './sign-in-failure.entity';

/** A session ends after this long without a request, ms (CONTRACT.md, "Dashboard": 12 h idle). */
export const SESSION_IDLE_MS = 12 * 3600 * 1000;
/** `last_seen_at` is written at most this often per session, ms. */
const TOUCH_RESOLUTION_MS = 60_000;
/** Sign-in failures counted per IP and email (issue 13: 429 after 10 failures in 15 min). */
export const SIGN_IN_MAX_FAILURES = 10;
/**
 * Sign-in failures counted per IP alone, whatever the emails (one address spraying many emails), in
 * the same window: ten people behind one NAT each mistyping ten times stay under it.
 */
export const SIGN_IN_MAX_FAILURES_PER_IP = 100;
export const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;

/** Which sign-in limit a request hit: this IP with this email, or this IP whatever the email. */
export type SignInLimit = 'ip-and-email' | 'ip';

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

  /** The signed-in identity of a cookie token, or null (unknown, idle-expired, or the user is gone). */
  async resolve(token: string): Promise<SignedIn | null> {
    const now = this.clock.now();
    const session = await this.sessions.findOneBy({ tokenHash: sha256(token), lastSeenAt: MoreThan(new Date(now.getTime() - SESSION_IDLE_MS)) });
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

  /** The user's active sessions, most recently used first. */
  async list(userId: string, currentSessionId: string): Promise<SessionView[]> {
    const since = new Date(this.clock.now().getTime() - SESSION_IDLE_MS);
    const rows = await this.sessions.find({ where: { userId, lastSeenAt: MoreThan(since) }, order: { lastSeenAt: 'DESC' } });
    return rows.map((s) => ({ id: s.id, userAgent: s.userAgent, ip: s.ip, createdAt: s.createdAt, lastSeenAt: s.lastSeenAt, current: s.id === currentSessionId }));
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
   * The sign-in limit this IP and email are over, or null: {@link SIGN_IN_MAX_FAILURES} failures of
   * the pair, or {@link SIGN_IN_MAX_FAILURES_PER_IP} failures of the IP with any emails, in the last
   * {@link SIGN_IN_WINDOW_MS} (issue 13: "rate-limited per IP and email").
   */
  async signInLimited(ip: string, email: string): Promise<SignInLimit | null> {
    const since = new Date(this.clock.now().getTime() - SIGN_IN_WINDOW_MS);
    const [counts]: { pair: number; ip: number }[] = await this.failures.query(
      `SELECT count(*) FILTER (WHERE email = $2)::int AS pair, count(*)::int AS ip FROM sign_in_failures WHERE ip = $1 AND failed_at > $3`,
      [ip.slice(0, 64), email.trim().toLowerCase().slice(0, 320), since],
    );
    if (counts.pair >= SIGN_IN_MAX_FAILURES) return 'ip-and-email';
    return counts.ip >= SIGN_IN_MAX_FAILURES_PER_IP ? 'ip' : null;
  }

  /** Records a failed sign-in (and forgets every failure older than the window). */
  async recordFailure(ip: string, email: string): Promise<void> {
    const now = this.clock.now();
    const key = { ip: ip.slice(0, 64), email: email.trim().toLowerCase().slice(0, 320) };
    await this.failures.delete({ failedAt: LessThan(new Date(now.getTime() - SIGN_IN_WINDOW_MS)) });
    await this.failures.insert({ ...key, failedAt: now });
  }

  /** Forgets an IP and email's failures after a successful sign-in. */
  async clearFailures(ip: string, email: string): Promise<void> {
    await this.failures.delete({ ip: ip.slice(0, 64), email: email.trim().toLowerCase().slice(0, 320) });
  }
}
