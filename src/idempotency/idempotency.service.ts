import { Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { AsyncLocalStorage } from 'node:async_hooks';
import { IsNull, Repository } from 'typeorm';
import { ApiError, ErrorCode } from '../common/api-error';
import { Clock } from '../common/clock';
import { SecretCipher } from '../common/secret-cipher';
import { randomBase62 } from '../common/ids';
import { SqlParams } from '../sql/sql-statement';
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
export type IdempotencyClaim = { kind: 'claimed'; leaseToken: string } | { kind: 'replay'; status: number; body: string };

/**
 * The key a running request holds, as the code handling it sees it: an acceptance stores the
 * response in its own statement ({@link IdempotencyService.acceptanceParts}) and marks it here, so
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
    /** Seals stored responses under `WEBHOOK_SECRET_KEY(S)`: a created or rotated endpoint's answer holds its signing secret. */
    private readonly cipher: SecretCipher,
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
        throw new ApiError(ErrorCode.IDEMPOTENCY_KEY_REUSED, 422, 'This Idempotency-Key was already used with a different request body');
      }
      if (entry.responseStatus !== null)
        return { kind: 'replay', status: entry.responseStatus, body: this.openBody(scope, entry.responseBody ?? '') };
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
        { responseStatus: status, responseBody: this.sealBody(scope, body), expiresAt: new Date(now.getTime() + IDEMPOTENCY_RETENTION_MS) },
      );
      if (!result.affected)
        this.logger.warn(`Idempotency-Key ${scope.key} of ${scope.apiKeyId}: lease lost before the response was stored`);
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
   * The idempotency parts of an acceptance statement (`AcceptanceService`), for the request holding
   * `key`; their values go into `params`. `leaseSql` is the `WITH` part `lease`: the key's row while
   * this request still holds its lease, locked for the statement (`FOR UPDATE`), so the lease cannot be
   * lost between the check and the store; the statement's gate requires it. `storeSql(gate)` is the
   * `WITH` part `idempotency_stored`: stores `body` as the response, with its retention (spec section
   * 8), when `gate` has a row: the response is stored exactly when the work it describes is accepted
   * (CONTRACT.md, "Durability"). After the statement: {@link markStored} when it was accepted,
   * {@link leaseLost} when `lease` found no row.
   */
  acceptanceParts(params: SqlParams, key: HeldIdempotencyKey, body: string): { leaseSql: string; storeSql(gate: string): string } {
    const scope = () =>
      `api_key_id = ${params.add(key.scope.apiKeyId)} AND method = ${params.add(key.scope.method)} AND path = ${params.add(key.scope.path)} ` +
      `AND "key" = ${params.add(key.scope.key)} AND lease_token = ${params.add(key.leaseToken)} AND response_status IS NULL`;
    const leaseSql = `lease AS (SELECT 1 FROM idempotency_keys WHERE ${scope()} FOR UPDATE)`;
    const storeSql = (gate: string) => {
      const expiresAt = new Date(this.clock.now().getTime() + IDEMPOTENCY_RETENTION_MS);
      return `idempotency_stored AS (
         UPDATE idempotency_keys SET response_status = ${params.add(key.successStatus)}::smallint, response_body = ${params.add(this.sealBody(key.scope, body))}::text, expires_at = ${params.add(expiresAt)}::timestamptz
         WHERE ${scope()} AND EXISTS (SELECT 1 FROM ${gate}))`;
    };
    return { leaseSql, storeSql };
  }

  /**
   * Replaces the response an acceptance stored for `key` with `status` and `body` (a `Prefer: wait`
   * answer that became 200 with the ended object, CONTRACT.md "Synchronous answers"), so a replay
   * answers what the first request answered. Does nothing when no response was stored yet (the
   * interceptor then stores what the route sends). Logs, and keeps the stored answer, when the lease
   * was lost.
   */
  async replaceStored(key: HeldIdempotencyKey, status: number, body: string): Promise<void> {
    if (key.storedBody === undefined) return;
    const result = await this.records.update(
      { ...key.scope, leaseToken: key.leaseToken },
      { responseStatus: status, responseBody: this.sealBody(key.scope, body) },
    );
    if (!result.affected) {
      this.logger.warn(`Idempotency-Key ${key.scope.key} of ${key.scope.apiKeyId}: lease lost before the synchronous answer was stored`);
      return;
    }
    key.storedBody = body;
  }

  /** Marks `key`'s response as stored by its acceptance: the interceptor sends exactly `body` and stores nothing more. */
  markStored(key: HeldIdempotencyKey, body: string): void {
    key.storedBody = body;
  }

  /**
   * A response body as stored: sealed with the key's scope as context when `WEBHOOK_SECRET_KEY(S)` is
   * set (docs/idempotency.md), else as it is.
   */
  private sealBody(scope: IdempotencyScope, body: string): string {
    return this.cipher.encrypts ? this.cipher.seal(body, sealingContext(scope)) : body;
  }

  /**
   * A stored response body, opened when it was sealed (a body stored before a key was configured is
   * read as it is). Throws `SecretUnreadableError` when it was sealed under a key no longer configured.
   */
  private openBody(scope: IdempotencyScope, stored: string): string {
    return this.cipher.isEncrypted(stored) ? this.cipher.open(stored, sealingContext(scope)) : stored;
  }

  /** The 409 `IDEMPOTENCY_IN_FLIGHT` of a request that lost its key's lease before its acceptance (it outlived the lease and another request took the key over). */
  leaseLost(): ApiError {
    return new ApiError(ErrorCode.IDEMPOTENCY_IN_FLIGHT, 409, 'A request with this Idempotency-Key is still running; retry later');
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

/** The associated data a stored response is sealed with: its whole scope, so it opens for that key only. */
function sealingContext(scope: IdempotencyScope): string {
  return JSON.stringify([scope.apiKeyId, scope.method, scope.path, scope.key]);
}
