import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AccountsService } from '../accounts/accounts.service';
import { Plan } from '../accounts/plan';
import { assertBelowPlanLimit } from '../accounts/plan-limits';
import { ApiError, ErrorCode } from '../common/api-error';
import { Clock } from '../common/clock';
import { isId, newId } from '../common/ids';
import { sqlRows } from '../sql/sql';
import { utcMonthOf } from '../common/utc-month';
import { ApiKey } from './api-key.entity';
import { KeyCache } from '../accounts/key-cache';
import { API_KEY_SECRET_PREFIX, displayPrefix, hashApiKeySecret, newApiKeySecret } from './api-key-secret';

/** The caller of an authenticated request, as attached by the API key guard. */
export interface AuthenticatedKey {
  apiKeyId: string;
  accountId: string;
  plan: Plan;
  /**
   * The key's usage as read with the key ({@link ApiKeysService.authenticate}): its quota month
   * (`YYYY-MM-01`) and the screenshots counted in it, so a request that reserves nothing has its
   * `X-RateLimit-*` headers without a second query (`QuotaService.statusFor`).
   */
  usageAtAuth?: { month: string; used: number };
}

/** A freshly created key: the only moment the secret exists outside the caller's hands. */
export interface CreatedApiKey {
  id: string;
  key: string;
  prefix: string;
  accountId: string;
}

/** Counts an account's active (unrevoked) keys, the plan-limited number. */
const ACTIVE_KEYS_SQL = `SELECT count(*)::int AS n FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL`;

/** Granularity of {@link ApiKey.lastUsedAt}, ms. */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** A key as looked up for authentication (and cached by {@link KeyCache}); `used` only as loaded. */
interface LoadedKey {
  id: string;
  accountId: string;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
  plan: Plan;
  used?: number;
}

/** Thrown by {@link ApiKeysService.revoke} for an unknown key id (CLI-facing). */
export class ApiKeyNotFoundError extends Error {}

/** Creates, lists, revokes and authenticates API keys (CONTRACT.md, "API keys"). */
@Injectable()
export class ApiKeysService {
  constructor(
    @InjectRepository(ApiKey) private readonly keys: Repository<ApiKey>,
    private readonly accounts: AccountsService,
    private readonly clock: Clock,
    private readonly keyCache: KeyCache,
  ) {}

  /**
   * Creates a key for an account (by id or email). The returned `key` is the secret, shown once.
   * Operators (the CLI) are not limited; with `withinPlan` (the dashboard) the account's active keys
   * stay within its plan (CONTRACT.md, "Organizations and plan limits"), else 403 `PLAN_LIMIT_REACHED`.
   */
  async create(accountIdOrEmail: string, name?: string, { withinPlan = false }: { withinPlan?: boolean } = {}): Promise<CreatedApiKey> {
    const account = await this.accounts.get(accountIdOrEmail);
    const secret = newApiKeySecret();
    const record = await this.keys.manager.transaction(async (manager) => {
      if (withinPlan) await assertBelowPlanLimit(manager, account.id, 'api_keys', ACTIVE_KEYS_SQL);
      return manager.save(
        this.keys.create({
          id: newId('apiKey'),
          accountId: account.id,
          name: name ?? null,
          prefix: displayPrefix(secret),
          secretHash: hashApiKeySecret(secret),
          revokedAt: null,
        }),
      );
    });
    return { id: record.id, key: secret, prefix: record.prefix, accountId: account.id };
  }

  /**
   * Revokes a key at once, in every process (cached lookups are invalidated, {@link KeyCache.bump});
   * idempotent (a second revoke keeps the first time). Throws {@link ApiKeyNotFoundError}.
   */
  async revoke(keyId: string): Promise<ApiKey> {
    const key = await this.keys.findOneBy({ id: keyId });
    if (!key) throw new ApiKeyNotFoundError(`No API key ${keyId}`);
    if (!key.revokedAt) {
      key.revokedAt = this.clock.now();
      await this.keys.save(key);
      await this.keyCache.bump();
    }
    return key;
  }

  /** The keys of an account (by id or email), oldest first. */
  async list(accountIdOrEmail: string): Promise<ApiKey[]> {
    const account = await this.accounts.get(accountIdOrEmail);
    return this.keys.find({ where: { accountId: account.id }, order: { createdAt: 'ASC' } });
  }

  /**
   * Resolves a presented secret to its caller. The lookup is served by {@link KeyCache} for a few
   * seconds, so most requests make no query for it; a revocation still takes effect on the next
   * request (CONTRACT.md, "API keys": `revoke` bumps the auth version, as a plan change does in
   * `AccountsService.changePlan`). Throws 401 `INVALID_API_KEY` for an unknown secret and 401
   * `API_KEY_REVOKED` for a revoked one.
   *
   * The key's usage this month is read with the key when it is looked up in PostgreSQL (then
   * `usageAtAuth` is set, for the `X-RateLimit-*` headers of a request that counts nothing); a cached
   * lookup carries none, so those headers are read when needed (`QuotaService.statusFor`) and stay
   * exact. A request that reserves a screenshot takes them from its reservation either way.
   */
  async authenticate(secret: string): Promise<AuthenticatedKey> {
    if (!secret.startsWith(API_KEY_SECRET_PREFIX)) throw new ApiError(ErrorCode.INVALID_API_KEY, 401, 'API key not recognised');
    const { month } = utcMonthOf(this.clock.now());
    const hash = hashApiKeySecret(secret);
    let loaded: LoadedKey | undefined;
    const key = await this.keyCache.get<LoadedKey>(`api:${hash}`, async () => (loaded = await this.load(hash, month)) ?? null);
    if (!key) throw new ApiError(ErrorCode.INVALID_API_KEY, 401, 'API key not recognised');
    if (key.revokedAt) throw new ApiError(ErrorCode.API_KEY_REVOKED, 401, 'API key has been revoked');
    await this.touch(key);
    return {
      apiKeyId: key.id,
      accountId: key.accountId,
      plan: key.plan,
      ...(loaded === key && loaded.used !== undefined && { usageAtAuth: { month, used: loaded.used } }),
    };
  }

  /** One indexed join: the key, its account's plan and its usage in `month` (`YYYY-MM-01`). */
  private async load(hash: string, month: string): Promise<LoadedKey | undefined> {
    const [key]: (LoadedKey & { used: number | null })[] = await sqlRows(
      this.keys.manager.connection,
      `SELECT k.id, k.account_id AS "accountId", k.revoked_at AS "revokedAt", k.last_used_at AS "lastUsedAt", a.plan, u.used
           FROM api_keys k JOIN accounts a ON a.id = k.account_id
           LEFT JOIN quota_usage u ON u.api_key_id = k.id AND u.month = $2::date
          WHERE k.secret_hash = $1`,
      [hash, month],
    );
    return key && { ...key, used: key.used ?? 0 };
  }

  /**
   * Records "last used" for the dashboard at most once per {@link LAST_USED_RESOLUTION_MS}, so the hot
   * path writes once a minute per key, not on every request. Updates `key` (the cached lookup too).
   */
  private async touch(key: LoadedKey): Promise<void> {
    const now = this.clock.now();
    if (key.lastUsedAt && now.getTime() - new Date(key.lastUsedAt).getTime() < LAST_USED_RESOLUTION_MS) return;
    key.lastUsedAt = now;
    await this.keys.update({ id: key.id }, { lastUsedAt: now });
  }

  /**
   * Revokes one of the account's keys (the dashboard); null when the account has no such key (the
   * page answers 404). Idempotent like {@link revoke}.
   */
  async revokeOwn(accountId: string, keyId: string): Promise<ApiKey | null> {
    const key = isId('apiKey', keyId) ? await this.keys.findOneBy({ id: keyId, accountId }) : null;
    return key ? this.revoke(key.id) : null;
  }

  /**
   * The caller identity of one of the account's active keys, for work the dashboard does on a key's
   * behalf (the playground's captures count against that key like the API). Null when the key is not
   * the account's or is revoked.
   */
  async callerFor(accountId: string, keyId: string): Promise<AuthenticatedKey | null> {
    const key = isId('apiKey', keyId) ? await this.keys.findOne({ where: { id: keyId, accountId }, relations: { account: true } }) : null;
    return key && !key.revokedAt && key.account ? { apiKeyId: key.id, accountId, plan: key.account.plan } : null;
  }
}
