import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { AsyncLocalStorage } from 'node:async_hooks';
import { EntityManager, IsNull, LessThanOrEqual, Repository } from 'typeorm';
import { ApiError, ErrorCode } from '../common/api-error';
import { Clock } from '../common/clock';
import { randomBase62 } from '../common/ids';
import { IdempotencyRecord } from './idempotency-record.entity';

/** How long a running request holds its key: a request that crashed frees it after this (CONTRACT.md). */
export const IDEMPOTENCY_LEASE_MS = 60_000;
/** How long a stored 2xx response is replayed (spec section 8). */
export const IDEMPOTENCY_RETENTION_MS = 24 * 60 * 60 * 1000;

/** Where a key lives: two API keys, methods or paths never see each other's entries. */
export interface IdempotencyScope {
  apiKeyId: string;
  method: string;
  path: string;
  key: string;
}

/** The outcome of {@link IdempotencyService.claim}. */
export type IdempotencyClaim =
  | { kind: 'claimed'; leaseToken: string }
  | { kind: 'replay'; status: number; body: string };

/**
 * The key a running request holds, as the code handling it sees it: an acceptance stores the
 * response in its own transaction ({@link IdempotencyService.storeWithin}) and marks it here, so
 * the interceptor sends exactly what was stored and stores nothing more.
 */
export interface HeldIdempotencyKey {
  readonly scope: IdempotencyScope;
  readonly leaseToken: string;
  /** HTTP status of the route's success answer (e.g. 202). */
  readonly successStatus: number;
  /** The stored response body, once stored within an acceptance. */
  storedBody?: string;
}

/**
 * The `Idempotency-Key` store, in PostgreSQL: every API process shares it, it survives restarts, and
 * a claim is one conditional upsert, so two concurrent requests cannot both own a key.
 */
@Injectable()
export class IdempotencyService {
  private readonly logger = new Logger(IdempotencyService.name);
  private readonly held = new AsyncLocalStorage<HeldIdempotencyKey>();

  constructor(
    @InjectRepository(IdempotencyRecord) private readonly records: Repository<IdempotencyRecord>,
    private readonly clock: Clock,
  ) {}

  /**
   * Claims the key for a request with this fingerprint under a lease, or answers with the stored
   * response of an earlier one. A free key (new, released, or expired: a lease that ran out or a
   * response older than the retention) is claimed. Throws 422 `IDEMPOTENCY_KEY_REUSED` when the
   * entry belongs to a different request, and 409 `IDEMPOTENCY_IN_FLIGHT` while its request runs.
   */
  async claim(scope: IdempotencyScope, fingerprint: string): Promise<IdempotencyClaim> {
    // A second round only when the entry was released between the upsert and the read.
    for (let round = 0; round < 3; round++) {
      const now = this.clock.now();
      const leaseToken = randomBase62(24);
      const claimed: unknown[] = await this.records.query(
        `INSERT INTO idempotency_keys
           (api_key_id, method, path, "key", fingerprint, lease_token, response_status, response_body, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, NULL, NULL, $7, $8)
         ON CONFLICT (api_key_id, method, path, "key") DO UPDATE SET
           fingerprint = EXCLUDED.fingerprint, lease_token = EXCLUDED.lease_token, response_status = NULL,
           response_body = NULL, created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
         WHERE idempotency_keys.expires_at <= EXCLUDED.created_at
         RETURNING 1`,
        [scope.apiKeyId, scope.method, scope.path, scope.key, fingerprint, leaseToken, now, new Date(now.getTime() + IDEMPOTENCY_LEASE_MS)],
      );
      if (claimed.length) return { kind: 'claimed', leaseToken };
      const entry = await this.records.findOneBy({ ...scope });
      if (!entry) continue;
      if (entry.fingerprint !== fingerprint) {
        throw new ApiError(
          ErrorCode.IDEMPOTENCY_KEY_REUSED,
          422,
          'This Idempotency-Key was already used with a different request body',
        );
      }
      if (entry.responseStatus !== null) return { kind: 'replay', status: entry.responseStatus, body: entry.responseBody ?? '' };
      break;
    }
    throw new ApiError(ErrorCode.IDEMPOTENCY_IN_FLIGHT, 409, 'A request with this Idempotency-Key is still running; retry later');
  }

  /**
   * Stores the 2xx response of the request holding the lease, for replay during the retention.
   * Logs, and stores nothing, when the lease was lost (the request outlived it and another took over).
   */
  async complete(scope: IdempotencyScope, leaseToken: string, status: number, body: string): Promise<void> {
    try {
      const now = this.clock.now();
      const result = await this.records.update(
        { ...scope, leaseToken, responseStatus: IsNull() },
        { responseStatus: status, responseBody: body, expiresAt: new Date(now.getTime() + IDEMPOTENCY_RETENTION_MS) },
      );
      if (!result.affected) this.logger.warn(`Idempotency-Key ${scope.key} of ${scope.apiKeyId}: lease lost before the response was stored`);
    } catch (err) {
      this.logger.error(`Could not store the response of Idempotency-Key ${scope.key} of ${scope.apiKeyId}`, (err as Error).stack);
    }
  }

  /** Runs `fn` (the request's handler) holding `key`: code it calls finds it with {@link heldKey}. */
  runHolding<T>(key: HeldIdempotencyKey, fn: () => T): T {
    return this.held.run(key, fn);
  }

  /** The `Idempotency-Key` the current request holds, if it sent one (see {@link runHolding}). */
  heldKey(): HeldIdempotencyKey | undefined {
    return this.held.getStore();
  }

  /**
   * Stores the success response of the request holding `key` inside the caller's transaction
   * (`manager`), so the response is stored exactly when the work it describes commits (CONTRACT.md,
   * "Durability": one transaction for quota, row and idempotency record). Throws 409
   * `IDEMPOTENCY_IN_FLIGHT` (rolling the transaction back) when the lease was lost meanwhile.
   */
  async storeWithin(manager: EntityManager, key: HeldIdempotencyKey, body: string): Promise<void> {
    const now = this.clock.now();
    const result = await manager.update(
      IdempotencyRecord,
      { ...key.scope, leaseToken: key.leaseToken, responseStatus: IsNull() },
      { responseStatus: key.successStatus, responseBody: body, expiresAt: new Date(now.getTime() + IDEMPOTENCY_RETENTION_MS) },
    );
    if (!result.affected) {
      throw new ApiError(ErrorCode.IDEMPOTENCY_IN_FLIGHT, 409, 'A request with this Idempotency-Key is still running; retry later');
    }
    key.storedBody = body;
  }

  /** Frees the key after a non-2xx answer, so a retry runs again. Never throws (the lease runs out anyway). */
  async release(scope: IdempotencyScope, leaseToken: string): Promise<void> {
    try {
      await this.records.delete({ ...scope, leaseToken, responseStatus: IsNull() });
    } catch (err) {
      this.logger.error(`Could not release Idempotency-Key ${scope.key} of ${scope.apiKeyId}`, (err as Error).stack);
    }
  }

  /**
   * Deletes up to `limit` expired entries (a response past its 24 hours, a lease that ran out); returns
   * how many. Run in batches by the retention job (uses the index on `expires_at`).
   */
  async purgeExpired(limit: number): Promise<number> {
    const result = await this.records
      .createQueryBuilder()
      .delete()
      .where('ctid IN (SELECT ctid FROM idempotency_keys WHERE expires_at <= :now LIMIT :limit)', { now: this.clock.now(), limit })
      .execute();
    return result.affected ?? 0;
  }
}
