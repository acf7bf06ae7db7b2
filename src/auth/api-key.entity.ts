import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { Account } from '../accounts/account.entity';

/** An API key record. The secret itself is never stored: only its SHA-256 hash and a display prefix. */
@Entity({ name: 'api_keys' })
export class ApiKey {
  /** `key_…` (the record id, not the secret). */
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id: string;

  @Index()
  @Column({ name: 'account_id', type: 'varchar', length: 40 })
  accountId: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id' })
  account?: Account;

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

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;

  /** Last authenticated request with this key, to the minute (see {@link ApiKeysService.authenticate}); null if never used. */
  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;
}
