import { Injectable } from '@nestjs/common';
import { findAccountOwned, requireAccountOwned } from '../accounts/find-account-owned';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
import { assertBelowPlanLimit } from '../accounts/plan-limits';
import { ApiError, ErrorCode, FieldError } from '../common/api-error';
import { Clock } from '../common/clock';
import { PostgresRateLimiter } from '../common/postgres-rate-limiter';
import { newId, randomBase62 } from '../common/ids';
import { SecretCipher } from '../common/secret-cipher';
import { resealColumns, ResealReport } from '../sql/secret-reseal';
import { ENDPOINT_TEST_LIMIT } from '../egress/customer-endpoints';
import { SsrfGuard } from '../egress/ssrf-guard';
import { BucketClient, BucketTarget } from './bucket-client';
import { describeDestinationError } from './destination-errors';
import {
  CreateStorageDestinationDto,
  StorageDestinationDto,
  StorageDestinationListDto,
  StorageDestinationTestDto,
} from './dto/storage-destination.dto';
import { StorageDestination } from './storage-destination.entity';
import { publicColumns } from '../common/public-columns';

/** Counts the account's storage destinations for {@link assertBelowPlanLimit}. */
const DESTINATIONS_SQL = `SELECT count(*)::int AS n FROM storage_destinations WHERE account_id = $1`;

/** How hard the test tries: one attempt, answered within seconds (it runs inside an HTTP request). */
const TEST_LIMITS = { maxAttempts: 1, requestTimeoutMs: 10_000, totalMs: 15_000 } as const;

/** Region of a destination created without one. */
export const DEFAULT_REGION = 'us-east-1';

/** The capture options this module checks at submission, as the customer gave them. */
export interface DestinationOptionsInput {
  storage?: { destinationId: string } | null;
  upload?: { url: string } | null;
}

/** An account's caller, as far as destinations care. */
type Caller = { accountId: string };

/**
 * Storage destinations (CONTRACT.md, "Storage destinations"): customers' S3-compatible buckets,
 * credentials sealed with {@link SecretCipher} (bound to the destination's id) and never returned, at
 * most the plan's number per account (CONTRACT.md, "Organizations and plan limits"), endpoints
 * checked by the SSRF guard.
 */
@Injectable()
export class StorageDestinationsService {
  constructor(
    @InjectRepository(StorageDestination) private readonly destinations: Repository<StorageDestination>,
    private readonly cipher: SecretCipher,
    private readonly clock: Clock,
    private readonly guard: SsrfGuard,
    @InjectDataSource() dataSource: DataSource,
  ) {
    this.testLimiter = new PostgresRateLimiter(dataSource, ENDPOINT_TEST_LIMIT);
  }

  /** {@link test}s per destination: 10 a minute (CONTRACT.md, "Tenancy: fair share and isolation"), shared with webhook test pings. */
  private readonly testLimiter: PostgresRateLimiter;

  /**
   * Re-seals every destination's credentials under the first configured key ({@link resealColumns};
   * `webhook:reseal`). The credentials themselves do not change.
   */
  resealCredentials(): Promise<ResealReport> {
    return resealColumns(this.destinations, this.cipher, ['credentialsSealed']);
  }

  /**
   * Creates a destination. Throws 400 `TARGET_NOT_ALLOWED` when the endpoint's host is refused by the
   * SSRF guard, 403 `PLAN_LIMIT_REACHED` (`details: { resource, limit, plan }`) when the account
   * already has its plan's number of destinations. The bucket is not contacted: see {@link test}.
   */
  async create(caller: Caller, dto: CreateStorageDestinationDto): Promise<StorageDestinationDto> {
    if (dto.endpoint) await this.guard.assertAllowed(dto.endpoint);
    return this.destinations.manager.transaction(async (manager) => {
      await assertBelowPlanLimit(manager, caller.accountId, 'storage_destinations', DESTINATIONS_SQL);
      const id = newId('storageDestination');
      const destination = manager.create(StorageDestination, {
        id,
        accountId: caller.accountId,
        type: dto.type,
        bucket: dto.bucket,
        region: dto.region ?? DEFAULT_REGION,
        endpoint: dto.endpoint ?? null,
        forcePathStyle: dto.forcePathStyle ?? false,
        prefix: dto.prefix ?? '',
        description: dto.description ?? '',
        credentialsSealed: this.cipher.seal(JSON.stringify({ accessKeyId: dto.accessKeyId, secretAccessKey: dto.secretAccessKey }), id),
        createdAt: this.clock.now(),
      });
      await manager.insert(StorageDestination, destination);
      return toDto(destination);
    });
  }

  /** The account's destinations, oldest first, without credentials. */
  async list(caller: Caller): Promise<StorageDestinationListDto> {
    const rows = await this.destinations.find({ where: { accountId: caller.accountId }, order: { createdAt: 'ASC', id: 'ASC' } });
    return { data: rows.map(toDto) };
  }

  /** One destination of the account. Throws 404 `NOT_FOUND` for an unknown id or another account's. */
  async get(caller: Caller, id: string): Promise<StorageDestinationDto> {
    return toDto(await this.findOwn(caller, id));
  }

  /** Deletes a destination; captures that name it afterwards are refused (400), running ones fail their upload. Throws 404 as {@link get}. */
  async remove(caller: Caller, id: string): Promise<void> {
    const destination = await this.findOwn(caller, id);
    await this.destinations.delete({ id: destination.id });
  }

  /**
   * Writes a small object under the destination's prefix and deletes it again: `{ ok: true, error:
   * null }`, or `{ ok: false, error }` with a customer-safe reason (credentials, bucket, network, SSRF
   * guard, an answer over 1 MiB, a timeout: {@link BucketClient}). At most {@link ENDPOINT_TEST_LIMIT}
   * (10) per destination per minute (CONTRACT.md, "Tenancy: fair share and isolation"). Throws 404 as
   * {@link get}, 429 `RATE_LIMITED` (with `Retry-After`; the bucket is not contacted) over the limit.
   */
  async test(caller: Caller, id: string): Promise<StorageDestinationTestDto> {
    const destination = await this.findOwn(caller, id);
    await this.testLimiter.consumeOrRefuse(
      destination.id,
      `Too many tests: a storage destination may be tested ${ENDPOINT_TEST_LIMIT.points} times per minute`,
    );
    const key = `${destination.prefix}glimpse-test-${randomBase62(16)}.txt`;
    let client: BucketClient | null = null;
    try {
      client = await BucketClient.open(this.targetOf(destination), this.guard, {
        ...TEST_LIMITS,
        signal: AbortSignal.timeout(TEST_LIMITS.totalMs),
      });
      await client.put(key, Buffer.from('Glimpse storage destination test; safe to delete.\n'), 'text/plain');
      await client.delete(key);
      return { ok: true, error: null };
    } catch (err) {
      return { ok: false, error: describeDestinationError(err) };
    } finally {
      client?.close();
    }
  }

  /**
   * Checks the destination options of a capture at submission (CONTRACT.md, "Storage destinations"):
   * `storage.destinationId` must name a destination of the account (400 `VALIDATION_FAILED` naming
   * `<prefix>storage.destinationId`), and `upload.url` must pass the SSRF guard (400
   * `TARGET_NOT_ALLOWED`). Call before anything is counted.
   */
  async assertUsable(accountId: string, inputs: Array<{ input: DestinationOptionsInput; prefix: string }>): Promise<void> {
    const errors: FieldError[] = [];
    for (const { input, prefix } of inputs) {
      const destinationId = input.storage?.destinationId;
      if (destinationId && !(await this.findFor(accountId, destinationId))) {
        errors.push({ field: `${prefix}storage.destinationId`, message: 'is not a storage destination of this account' });
      }
    }
    if (errors.length) throw ApiError.validation(errors);
    for (const { input, prefix } of inputs) {
      if (!input.upload?.url) continue;
      await this.guard.assertAllowed(input.upload.url).catch((err: unknown) => {
        if (err instanceof ApiError && err.code === ErrorCode.TARGET_NOT_ALLOWED) {
          const field = `${prefix}upload.url`;
          throw new ApiError(err.code, err.status, `${field}: ${err.message}`, { ...(err.details ?? {}), field });
        }
        throw err;
      });
    }
  }

  /** The account's destination `id`, or null (malformed, unknown, deleted, or another account's). */
  async findFor(accountId: string, id: string): Promise<StorageDestination | null> {
    return findAccountOwned(this.destinations, 'storageDestination', id, accountId);
  }

  /** Where and as whom to write for `destination`: its credentials opened. Throws `SecretUnreadableError` when the sealing key is gone. */
  targetOf(destination: StorageDestination): BucketTarget {
    const { accessKeyId, secretAccessKey } = JSON.parse(this.cipher.open(destination.credentialsSealed, destination.id)) as {
      accessKeyId: string;
      secretAccessKey: string;
    };
    return {
      bucket: destination.bucket,
      region: destination.region,
      endpoint: destination.endpoint,
      forcePathStyle: destination.forcePathStyle,
      accessKeyId,
      secretAccessKey,
    };
  }

  private findOwn(caller: Caller, id: string): Promise<StorageDestination> {
    return requireAccountOwned(this.destinations, 'storageDestination', id, caller.accountId, 'Storage destination');
  }
}

function toDto(d: StorageDestination): StorageDestinationDto {
  return publicColumns(d, ['id', 'type', 'bucket', 'region', 'endpoint', 'forcePathStyle', 'prefix', 'description', 'createdAt']);
}
