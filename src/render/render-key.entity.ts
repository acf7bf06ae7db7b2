import { Column, Entity, Index } from 'typeorm';
import { KeyOwnedWork } from '../auth/key-owned-work.entity';
import { TimestampColumn } from '../common/timestamp-column';

/**
 * A key that signs render links (CONTRACT.md, "Render links"). It belongs to the API key that created
 * it: its renders count against that key's quota, and it stops working when that key is revoked. The
 * secret is stored sealed ({@link SecretCipher}, bound to this id): the server computes HMACs with it.
 * Its id is `rk_…`; `apiKeyId` is the API key whose quota its renders use.
 */
@Entity({ name: 'render_keys' })
@Index(['accountId', 'createdAt'])
export class RenderKey extends KeyOwnedWork {
  @Column({ type: 'varchar', length: 500, default: '' })
  description: string;

  /** Host names links may capture: exact or with one leading `*.`; empty: any host. */
  @Column({ name: 'allowed_hosts', type: 'jsonb', default: () => "'[]'" })
  allowedHosts: string[];

  /** The `rks_…` secret as sealed by {@link SecretCipher.seal}. */
  @Column({ name: 'secret_sealed', type: 'text' })
  secretSealed: string;

  /** The secret before the last rotation, sealed, while it still signs; else null. */
  @Column({ name: 'previous_secret_sealed', type: 'text', nullable: true })
  previousSecretSealed: string | null;

  /** Until when {@link previousSecretSealed} signs; null when there is none. */
  @TimestampColumn('previous_secret_expires_at', { nullable: true })
  previousSecretExpiresAt: Date | null;

  @TimestampColumn('created_at')
  createdAt: Date;
}
