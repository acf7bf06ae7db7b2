import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { KeyScoped } from '../auth/key-scoped.entity';
import { TimestampColumn } from '../common/timestamp-column';

/**
 * One `Idempotency-Key` in its scope (API key, method, path): in flight under a lease while its first
 * request runs (`responseStatus` null), then the stored 2xx response that retries replay.
 */
@Entity({ name: 'idempotency_keys' })
@Index(['expiresAt'])
export class IdempotencyRecord extends KeyScoped {
  @PrimaryColumn({ type: 'varchar', length: 10 })
  method: string;

  @PrimaryColumn({ type: 'text' })
  path: string;

  /** The `Idempotency-Key` header value. */
  @PrimaryColumn({ type: 'varchar', length: 128 })
  key: string;

  /** Hex SHA-256 of the request (canonical JSON of the body, hashes of uploaded files). */
  @Column({ type: 'char', length: 64 })
  fingerprint: string;

  /** Random token of the request that claimed the key; only it may store or release the entry. */
  @Column({ name: 'lease_token', type: 'varchar', length: 32 })
  leaseToken: string;

  /** The stored response's status; null while the first request runs. */
  @Column({ name: 'response_status', type: 'smallint', nullable: true })
  responseStatus: number | null;

  /** The stored response body, exactly as sent. */
  @Column({ name: 'response_body', type: 'text', nullable: true })
  responseBody: string | null;

  /** From the service clock. */
  @TimestampColumn('created_at')
  createdAt: Date;

  /** In flight: when the lease runs out. Stored: when the response is forgotten. Past it, the key is free. */
  @TimestampColumn('expires_at')
  expiresAt: Date;
}
