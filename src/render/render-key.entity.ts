import { Column, Entity, Index } from 'typeorm';
import { KeyOwnedWork } from '../auth/key-owned-work.entity';
import { WithRotatingSecret } from '../common/rotating-secret';
import { TimestampColumn } from '../common/timestamp-column';

/**
 * A key that signs render links (CONTRACT.md, "Render links"). It belongs to the API key that created
 * it: its renders count against that key's quota, and it stops working when that key is revoked. The
 * `rks_…` secret is stored sealed ({@link WithRotatingSecret}): the server computes HMACs with it.
 * Its id is `rk_…`; `apiKeyId` is the API key whose quota its renders use.
 */
@Entity({ name: 'render_keys' })
@Index(['accountId', 'createdAt'])
export class RenderKey extends WithRotatingSecret(KeyOwnedWork) {
  @Column({ type: 'varchar', length: 500, default: '' })
  description: string;

  /** Host names links may capture: exact or with one leading `*.`; empty: any host. */
  @Column({ name: 'allowed_hosts', type: 'jsonb', default: () => "'[]'" })
  allowedHosts: string[];

  @TimestampColumn('created_at')
  createdAt: Date;
}
