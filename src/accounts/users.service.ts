import { Inject, Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../common/hashing';
import { isEmail } from 'class-validator';
import { IsNull, MoreThan, Repository } from 'typeorm';
import { Clock } from '../common/clock';
import { newId } from '../common/ids';
import { APP_CONFIG, AppConfig, dashboardUrlOf } from '../config/app-config';
import { Account } from './account.entity';
import { AccountError, AccountsService, normalizeEmail } from './accounts.service';
import { PasswordHasher } from './password-hasher';
import { PasswordLink } from './password-link.entity';
import { User, UserRole } from './user.entity';

/** Shortest accepted password (CONTRACT.md, "Dashboard"). */
export const PASSWORD_MIN_LENGTH = 12;
/** Longest accepted password (bounds the hashing work of one request). */
export const PASSWORD_MAX_LENGTH = 256;
/** Lifetime of a set-password link, ms (CONTRACT.md, "Dashboard": 24 h). */
export const PASSWORD_LINK_TTL_MS = 24 * 3600 * 1000;

export { ARGON2_OPTIONS } from './password-hasher';

/** Thrown by the users service for a rule a person broke (duplicate email, short password, used link…); its message is shown as is. */
export class UserError extends Error {}

/** A dashboard user as the pages and the CLI see it (never the hash). */
export interface UserView {
  id: string;
  email: string;
  accountId: string;
  role: UserRole;
  /** False until the user has followed a set-password link. */
  hasPassword: boolean;
  createdAt: Date;
}

/** A user with the one-time link that sets their password. */
export interface UserWithLink extends UserView {
  setPasswordUrl: string;
}

/**
 * What an owner is told when an invite cannot be made for an email that already has a user (users
 * belong to one account; CONTRACT.md, "Dashboard"). Neutral on purpose: it is the same whether that
 * user is in the owner's account or another one, and does not say which.
 */
export const INVITE_REFUSED =
  'No invite link was created for that email. Ask the person for another email address, or check the members listed here.';

/** A set-password link that is unknown, used or expired. */
const LINK_GONE = 'This link has expired or was already used. Ask for a new one.';

/**
 * Dashboard users (CONTRACT.md, "Dashboard"): creation by the CLI, invites and sign-up, one-time
 * set-password links, argon2id password hashes, credential checks and membership.
 */
@Injectable()
export class UsersService {
  /** A hash verified when the email is unknown, so that case takes as long as a wrong password. */
  private dummyHash: Promise<string> | null = null;

  constructor(
    @InjectRepository(User) private readonly users: Repository<User>,
    @InjectRepository(PasswordLink) private readonly links: Repository<PasswordLink>,
    private readonly accounts: AccountsService,
    private readonly clock: Clock,
    private readonly hasher: PasswordHasher,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Creates a user without a password in an account (by id or email) and a set-password link
   * (`user:create`, dashboard invites). Throws {@link AccountError} for an unknown account and
   * {@link UserError} when the email already has a user.
   */
  async create(accountIdOrEmail: string, email: string, role: UserRole): Promise<UserWithLink> {
    const account = await this.accounts.get(accountIdOrEmail);
    const user = await this.insert(account, email, role, null);
    return { ...toView(user), setPasswordUrl: await this.newLink(user.id) };
  }

  /**
   * Sign-up (`DASHBOARD_SIGNUP=true`): a new account on the `free` plan with this user as its owner.
   * Null, with nothing created, when the email already has a user or an account: the caller answers
   * that case exactly as a success, so sign-up never tells whether an email is known (CONTRACT.md,
   * "Dashboard"). The password is hashed in both cases, so both take as long.
   * Throws {@link UserError} for an invalid email or a password outside the rules.
   */
  async signUp(email: string, password: string): Promise<UserView | null> {
    const normalized = normalizeEmail(email);
    assertEmail(normalized);
    assertPasswordRules(password);
    const passwordHash = await this.hasher.hash(password);
    if (await this.users.existsBy({ email: normalized })) return null;
    let account: Account;
    try {
      account = await this.accounts.create(normalized, 'free');
    } catch (err) {
      if (err instanceof AccountError) return null;
      throw err;
    }
    return toView(await this.insert(account, normalized, 'owner', passwordHash));
  }

  /** A new set-password link for the user with this email (`user:reset-password`). Throws {@link UserError}. */
  async resetPasswordLink(email: string): Promise<{ id: string; setPasswordUrl: string }> {
    const user = await this.users.findOneBy({ email: normalizeEmail(email) });
    if (!user) throw new UserError(`No user ${normalizeEmail(email)}`);
    return { id: user.id, setPasswordUrl: await this.newLink(user.id) };
  }

  /** The user a set-password token belongs to while it is unused and unexpired, else null. */
  async userOfLink(token: string): Promise<UserView | null> {
    const link = await this.links.findOne({
      where: { tokenHash: sha256Hex(token), usedAt: IsNull(), expiresAt: MoreThan(this.clock.now()) },
      relations: { user: true },
    });
    return link?.user ? toView(link.user) : null;
  }

  /**
   * Sets the password of the link's user and uses the link up (once, even under concurrency).
   * Throws {@link UserError} for a used, expired or unknown link, or a password outside the rules.
   */
  async setPasswordWithLink(token: string, password: string): Promise<UserView> {
    // The token is checked before any hashing (CONTRACT.md, "Dashboard"): an unknown token costs a
    // lookup, never an argon2 computation.
    if (!(await this.userOfLink(token))) throw new UserError(LINK_GONE);
    assertPasswordRules(password);
    const passwordHash = await this.hasher.hash(password);
    const now = this.clock.now();
    // The postgres driver answers an UPDATE with [rows, affected].
    const [used]: [{ user_id: string }[], number] = await this.links.query(
      `UPDATE password_links SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING user_id`,
      [sha256Hex(token), now],
    );
    const userId = used[0]?.user_id;
    if (!userId) throw new UserError(LINK_GONE);
    await this.users.update({ id: userId }, { passwordHash });
    return toView(await this.users.findOneByOrFail({ id: userId }));
  }

  /**
   * The user when `password` matches; null otherwise (unknown email, no password set, wrong
   * password). Takes about as long in every case.
   */
  async verifyCredentials(email: string, password: string): Promise<UserView | null> {
    const user = await this.users.findOneBy({ email: normalizeEmail(email) });
    this.dummyHash ??= this.hasher.hash(randomBytes(16).toString('hex'));
    const ok = await this.hasher.verify(user?.passwordHash ?? (await this.dummyHash), password.slice(0, PASSWORD_MAX_LENGTH));
    return user?.passwordHash && ok ? toView(user) : null;
  }

  /** Changes a signed-in user's password after checking the current one. Throws {@link UserError}. */
  async changePassword(userId: string, current: string, next: string): Promise<void> {
    const user = await this.users.findOneByOrFail({ id: userId });
    if (!user.passwordHash || !(await this.hasher.verify(user.passwordHash, current))) {
      throw new UserError('The current password is not correct.');
    }
    assertPasswordRules(next);
    await this.users.update({ id: userId }, { passwordHash: await this.hasher.hash(next) });
  }

  /** The user with this email (trimmed, case-insensitive), or null. */
  async findByEmail(email: string): Promise<UserView | null> {
    const user = await this.users.findOneBy({ email: normalizeEmail(email) });
    return user ? toView(user) : null;
  }

  /** The user with this id, or null (deleted since). */
  async find(userId: string): Promise<UserView | null> {
    const user = await this.users.findOneBy({ id: userId });
    return user ? toView(user) : null;
  }

  /** The members of an account, owners first, then by email. */
  async listMembers(accountId: string): Promise<UserView[]> {
    const users = await this.users.find({ where: { accountId }, order: { role: 'DESC', email: 'ASC' } });
    return users.map(toView).sort((a, b) => (a.role === b.role ? a.email.localeCompare(b.email) : a.role === 'owner' ? -1 : 1));
  }

  /**
   * Removes a user of `accountId` (their sessions end with them). Only owners may; nobody removes
   * themself. Returns false when the user is not in the account (the page answers 404).
   * Throws {@link UserError} for a member acting or self-removal.
   */
  async removeMember(actor: UserView, userId: string): Promise<boolean> {
    if (actor.role !== 'owner') throw new UserError('Only owners can remove members.');
    if (actor.id === userId) throw new UserError('You cannot remove yourself.');
    const result = await this.users.delete({ id: userId, accountId: actor.accountId });
    return Boolean(result.affected);
  }

  /**
   * An owner invites someone into their account as a `member`: a user without password and a
   * one-time link, which works whether or not sign-up is open. Throws {@link UserError}; an email that
   * already has a user, in this account or any other, gets {@link INVITE_REFUSED}, the same message in
   * both cases, so an owner never learns whether another account has a user with that email.
   */
  async invite(actor: UserView, email: string): Promise<UserWithLink> {
    if (actor.role !== 'owner') throw new UserError('Only owners can invite members.');
    const normalized = normalizeEmail(email);
    assertEmail(normalized);
    if (await this.users.existsBy({ email: normalized })) throw new UserError(INVITE_REFUSED);
    return this.create(actor.accountId, normalized, 'member');
  }

  private async insert(account: Account, email: string, role: UserRole, passwordHash: string | null): Promise<User> {
    const normalized = normalizeEmail(email);
    if (await this.users.existsBy({ email: normalized })) throw new UserError(`A user with email ${normalized} already exists`);
    const user = this.users.create({
      id: newId('user'),
      accountId: account.id,
      email: normalized,
      role,
      passwordHash,
      createdAt: this.clock.now(),
    });
    await this.users.insert(user);
    return user;
  }

  private async newLink(userId: string): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    const now = this.clock.now();
    await this.links.insert({
      tokenHash: sha256Hex(token),
      userId,
      expiresAt: new Date(now.getTime() + PASSWORD_LINK_TTL_MS),
      usedAt: null,
      createdAt: now,
    });
    return `${dashboardUrlOf(this.config)}/set-password/${token}`;
  }
}

/** Throws {@link UserError} unless the password has {@link PASSWORD_MIN_LENGTH} to {@link PASSWORD_MAX_LENGTH} characters. */
export function assertPasswordRules(password: string): void {
  if ([...password].length < PASSWORD_MIN_LENGTH) throw new UserError(`Use at least ${PASSWORD_MIN_LENGTH} characters.`);
  if (password.length > PASSWORD_MAX_LENGTH) throw new UserError(`Use at most ${PASSWORD_MAX_LENGTH} characters.`);
}

/** Throws {@link UserError} unless the (normalised) email is a valid address of at most 254 characters (RFC 5321). */
export function assertEmail(email: string): void {
  if (email.length > 254 || !isEmail(email, { allow_display_name: false, require_tld: false, allow_ip_domain: false })) {
    throw new UserError('Enter a valid email address.');
  }
}

function toView(user: User): UserView {
  return {
    id: user.id,
    email: user.email,
    accountId: user.accountId,
    role: user.role,
    hasPassword: user.passwordHash !== null,
    createdAt: user.createdAt,
  };
}
