import { Column, Entity, Index } from 'typeorm';
import { AccountOwned } from '../accounts/account-owned.entity';

/**
 * A browser profile (CONTRACT.md, "Browser profiles"): a saved browser state (cookies and local
 * storage) that captures, monitors, render links and runs start their fresh context with, bound to
 * `allowedDomains`. The state is stored sealed ({@link SecretCipher}, bound to this id) and never returned.
 */
@Entity({ name: 'profiles' })
@Index(['accountId', 'createdAt'])
export class Profile extends AccountOwned {
  @Column({ type: 'varchar', length: 100 })
  name: string;

  /** Host patterns the state may be used for: exact names or one leading `*.` (1–20). */
  @Column({ name: 'allowed_domains', type: 'jsonb' })
  allowedDomains: string[];

  /** The filtered storage state as JSON, sealed by {@link SecretCipher.seal} with this id as context. */
  @Column({ name: 'state_sealed', type: 'text' })
  stateSealed: string;

  @Column({ name: 'cookie_count', type: 'int' })
  cookieCount: number;

  @Column({ name: 'origin_count', type: 'int' })
  originCount: number;

  /** Bytes of the state's JSON. */
  @Column({ name: 'size_bytes', type: 'int' })
  sizeBytes: number;

  /**
   * Grows by one whenever the state or `allowedDomains` change: part of the capture cache key of
   * captures with this profile, so a changed profile never reuses an image taken with the old state.
   */
  @Column({ name: 'state_version', type: 'int', default: 1 })
  stateVersion: number;

  /** When `profile.expired` was sent for the current state; null until then, cleared when the state changes. */
  @Column({ name: 'expired_at', type: 'timestamptz', nullable: true })
  expiredAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;

  /** When a capture or run last started with this profile; null before. */
  @Column({ name: 'last_used_at', type: 'timestamptz', nullable: true })
  lastUsedAt: Date | null;
}
