import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { Account } from '../accounts/account.entity';

/**
 * A URL of an account that receives events (spec section 2.3, CONTRACT.md "Webhooks"). The signing
 * secret is stored sealed (see {@link SecretCipher}); it never leaves the service layer.
 */
@Entity({ name: 'webhook_endpoints' })
@Index(['accountId', 'createdAt'])
export class WebhookEndpoint {
  /** `we_…` */
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id: string;

  @Column({ name: 'account_id', type: 'varchar', length: 40 })
  accountId: string;

  @ManyToOne(() => Account, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id' })
  account?: Account;

  @Column({ type: 'text' })
  url: string;

  /** Subscribed event types, or `["*"]` for all. */
  @Column({ type: 'jsonb' })
  events: string[];

  @Column({ type: 'varchar', length: 500, default: '' })
  description: string;

  /** The signing secret as sealed by {@link SecretCipher.seal} (bound to this id). */
  @Column({ name: 'secret_sealed', type: 'text' })
  secretSealed: string;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
