import { Column, CreateDateColumn, Entity, Index } from 'typeorm';
import { AccountOwned } from '../accounts/account-owned.entity';
import { TimestampColumn } from '../common/timestamp-column';

/**
 * An API key record. The secret itself is never stored: only its SHA-256 hash and a display prefix. Its
 * id (`key_…`, the record id, not the secret) and account are {@link AccountOwned}'s columns.
 */
@Entity({ name: 'api_keys' })
@Index(['accountId'])
export class ApiKey extends AccountOwned {
  @Column({ type: 'varchar', length: 100, nullable: true })
  name: string | null;

  /** First characters of the secret, for display (e.g. `sk_live_AbCd`). */
  @Column({ type: 'varchar', length: 20 })
  prefix: string;

  /** Hex SHA-256 of the full secret. */
  @Column({ name: 'secret_hash', type: 'char', length: 64, unique: true })
  secretHash: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @TimestampColumn('revoked_at', { nullable: true })
  revokedAt: Date | null;

  /** Last authenticated request with this key, to the minute (see {@link ApiKeysService.authenticate}); null if never used. */
  @TimestampColumn('last_used_at', { nullable: true })
  lastUsedAt: Date | null;
}
