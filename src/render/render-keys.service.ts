import { Injectable } from '@nestjs/common';
import { requireAccountOwned } from '../accounts/find-account-owned';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { assertBelowPlanLimit } from '../accounts/plan-limits';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { KeyCache } from '../accounts/key-cache';
import { Clock } from '../common/clock';
import { isId, newId, randomBase62 } from '../common/ids';
import { rotatedSecret } from '../common/rotating-secret';
import { SecretCipher } from '../common/secret-cipher';
import { resealColumns, ResealReport } from '../sql/secret-reseal';
import { sqlRows } from '../sql/sql';
import { Plan } from '../accounts/plan';
import { utcMonthOf } from '../common/utc-month';
import {
  CreatedRenderKeyDto,
  CreateRenderKeyDto,
  RenderKeyDto,
  RenderKeyListDto,
  RotatedRenderKeyDto,
  RotateRenderKeyDto,
} from './dto/render-key.dto';
import { RenderKey } from './render-key.entity';
import { publicColumns } from '../common/public-columns';

/** Counts the account's render keys for {@link assertBelowPlanLimit}. */
const RENDER_KEYS_SQL = `SELECT count(*)::int AS n FROM render_keys WHERE account_id = $1`;

/** Base62 characters after `rks_` in a render key secret (CONTRACT.md asks for at least 32). */
const SECRET_LENGTH = 40;

/** What verifying a render link needs of its key: the secrets that sign now, its hosts, and the caller it renders as. */
export interface RenderKeyVerifier {
  id: string;
  /** The current secret first, then the previous one during a rotation's overlap. */
  secrets: string[];
  allowedHosts: string[];
  /**
   * The creating API key, active (a revoked key gives no verifier), with its usage this month as read
   * with the key (up to {@link KEY_CACHE_TTL_MS} old: the `X-RateLimit-*` headers of a cache hit). A
   * copy per call: the request may annotate it.
   */
  caller: AuthenticatedKey;
}

/** A render key as cached by {@link KeyCache}: secrets opened, the previous one with its end. */
export interface CachedRenderKey {
  id: string;
  secret: string;
  /** The previous secret during a rotation's overlap, and when it stops signing (ms since the epoch). */
  previous: { secret: string; expiresAt: number } | null;
  allowedHosts: string[];
  /** The creating API key, active, with its usage this month as loaded; shared by every use of the entry, so never annotated. */
  caller: AuthenticatedKey;
}

/** A secret of a render key that signs links, and until when (ms since the epoch; Infinity for the current one). */
export interface SigningSecret {
  secret: string;
  untilMs: number;
}

/** The secrets of `key` that sign links at `nowMs` (ms), the current one first, then the previous one during a rotation's overlap. */
export function signingSecretsAt(key: CachedRenderKey, nowMs: number): SigningSecret[] {
  const secrets = [{ secret: key.secret, untilMs: Number.POSITIVE_INFINITY }];
  if (key.previous && key.previous.expiresAt > nowMs) secrets.push({ secret: key.previous.secret, untilMs: key.previous.expiresAt });
  return secrets;
}

/**
 * One round trip for a link's key: the render key, its API key if unrevoked, the account's plan and
 * the API key's usage in the month `$2`.
 */
const VERIFIER_SQL = `SELECT r.id, r.secret_sealed AS "secretSealed", r.previous_secret_sealed AS "previousSecretSealed",
       r.previous_secret_expires_at AS "previousSecretExpiresAt", r.allowed_hosts AS "allowedHosts",
       r.account_id AS "accountId", r.api_key_id AS "apiKeyId", a.plan, u.used
  FROM render_keys r
  JOIN api_keys k ON k.id = r.api_key_id AND k.account_id = r.account_id AND k.revoked_at IS NULL
  JOIN accounts a ON a.id = r.account_id
  LEFT JOIN quota_usage u ON u.api_key_id = k.id AND u.month = $2::date
 WHERE r.id = $1`;

/**
 * Render keys (CONTRACT.md, "Render links"): created by an API key and bound to it, secrets sealed
 * with {@link SecretCipher} (bound to the key's id) and shown only at creation and rotation, at most
 * the plan's limit per account (CONTRACT.md, "Organizations and plan limits").
 */
@Injectable()
export class RenderKeysService {
  constructor(
    @InjectRepository(RenderKey) private readonly keys: Repository<RenderKey>,
    private readonly keyCache: KeyCache,
    private readonly cipher: SecretCipher,
    private readonly clock: Clock,
  ) {}

  /**
   * Creates a render key for `caller`'s API key. Throws 403 `PLAN_LIMIT_REACHED` (`details: { resource,
   * limit, plan }`) when the account already has its plan's number of render keys.
   */
  async create(caller: AuthenticatedKey, dto: CreateRenderKeyDto): Promise<CreatedRenderKeyDto> {
    return this.keys.manager.transaction(async (manager) => {
      await assertBelowPlanLimit(manager, caller.accountId, 'render_keys', RENDER_KEYS_SQL);
      const id = newId('renderKey');
      const secret = newSecret();
      const key = manager.create(RenderKey, {
        id,
        accountId: caller.accountId,
        apiKeyId: caller.apiKeyId,
        description: dto.description ?? '',
        allowedHosts: [...new Set(dto.allowedHosts ?? [])],
        secretSealed: this.cipher.seal(secret, id),
        previousSecretSealed: null,
        previousSecretExpiresAt: null,
        createdAt: this.clock.now(),
      });
      await manager.insert(RenderKey, key);
      return { ...toDto(key), secret };
    });
  }

  /** The account's render keys, oldest first, without secrets. */
  async list(caller: Pick<AuthenticatedKey, 'accountId'>): Promise<RenderKeyListDto> {
    const keys = await this.keys.find({ where: { accountId: caller.accountId }, order: { createdAt: 'ASC', id: 'ASC' } });
    return { data: keys.map(toDto) };
  }

  /**
   * A new secret for the key; the old one keeps signing for `expiresInSeconds` (default 0), and stops
   * at once in every process otherwise ({@link KeyCache.bump}). Throws 404 `NOT_FOUND` for an unknown
   * id or another account's.
   */
  async rotate(caller: Pick<AuthenticatedKey, 'accountId'>, id: string, dto: RotateRenderKeyDto): Promise<RotatedRenderKeyDto> {
    const key = await this.findOwn(caller, id);
    const overlapS = dto.expiresInSeconds ?? 0;
    const secret = newSecret();
    await this.keys.update({ id: key.id }, rotatedSecret(key, this.cipher.seal(secret, key.id), overlapS, this.clock.now()));
    await this.keyCache.bump();
    return { id: key.id, secret };
  }

  /**
   * Re-seals every render key's secrets (current and previous) under the first configured key
   * ({@link resealColumns}; `webhook:reseal`). The secrets themselves do not change, so links keep working.
   */
  resealSecrets(): Promise<ResealReport> {
    return resealColumns(this.keys, this.cipher, ['secretSealed', 'previousSecretSealed']);
  }

  /** Deletes the key: its links fail at once, in every process ({@link KeyCache.bump}). Throws 404 `NOT_FOUND` as {@link rotate}. */
  async remove(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<void> {
    const key = await this.findOwn(caller, id);
    await this.keys.delete({ id: key.id });
    await this.keyCache.bump();
  }

  /**
   * What verifying a link of render key `id` needs, or null when the key is malformed, unknown,
   * deleted, or its API key was revoked (one answer for all: 401 `INVALID_SIGNATURE`). Served from
   * {@link KeyCache} for a few seconds; revocation, rotation and deletion apply at once all the same.
   */
  async verifier(id: string): Promise<RenderKeyVerifier | null> {
    if (!isId('renderKey', id)) return null;
    const key = await this.keyCache.get(`render:${id}`, () => this.load(id));
    if (!key) return null;
    const secrets = signingSecretsAt(key, this.clock.now().getTime()).map((s) => s.secret);
    return { id: key.id, secrets, allowedHosts: key.allowedHosts, caller: { ...key.caller } };
  }

  /**
   * Render key `id` as cached under the auth `version` ({@link KeyCache.peek}), synchronously: the
   * same object while its cache entry lasts (a reload, a rotation, a deletion or a revocation of its
   * API key gives another or none), or undefined when not cached (then {@link verifier} loads it). For
   * the hit route (docs/render-links.md#performance).
   */
  cached(id: string, version: string): CachedRenderKey | undefined {
    return this.keyCache.peek<CachedRenderKey>(`render:${id}`, version);
  }

  /** The render key `id` with its secrets opened and its active caller, or null (unknown, or its API key revoked). */
  private async load(id: string): Promise<CachedRenderKey | null> {
    const { month } = utcMonthOf(this.clock.now());
    const [row] = await sqlRows<{
      id: string;
      secretSealed: string;
      previousSecretSealed: string | null;
      previousSecretExpiresAt: Date | null;
      allowedHosts: string[];
      accountId: string;
      apiKeyId: string;
      plan: Plan;
      used: number | null;
    }>(this.keys.manager.connection, VERIFIER_SQL, [id, month]);
    if (!row) return null;
    return {
      id: row.id,
      secret: this.cipher.open(row.secretSealed, row.id),
      previous:
        row.previousSecretSealed && row.previousSecretExpiresAt
          ? { secret: this.cipher.open(row.previousSecretSealed, row.id), expiresAt: new Date(row.previousSecretExpiresAt).getTime() }
          : null,
      allowedHosts: row.allowedHosts,
      caller: { apiKeyId: row.apiKeyId, accountId: row.accountId, plan: row.plan, usageAtAuth: { month, used: row.used ?? 0 } },
    };
  }

  private findOwn(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<RenderKey> {
    return requireAccountOwned(this.keys, 'renderKey', id, caller.accountId, 'Render key');
  }
}

function newSecret(): string {
  return `rks_${randomBase62(SECRET_LENGTH)}`;
}

function toDto(key: RenderKey): RenderKeyDto {
  return publicColumns(key, ['id', 'apiKeyId', 'description', 'allowedHosts', 'createdAt']);
}
