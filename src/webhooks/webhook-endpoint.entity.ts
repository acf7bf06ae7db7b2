import { Column, Entity, Index } from 'typeorm';
import { AccountOwned } from '../accounts/account-owned.entity';
import type { SignatureScheme } from './signing';
import { WithRotatingSecret } from '../common/rotating-secret';
import { TimestampColumn } from '../common/timestamp-column';

/** Why an endpoint is disabled (CONTRACT.md "Webhooks"): by its owner, or automatically after failing. */
export const DISABLED_REASONS = ['manual', 'failing'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

/**
 * A URL of an account that receives events (spec section 2.3, CONTRACT.md "Webhooks"). The signing
 * secret is stored sealed ({@link WithRotatingSecret}); it never leaves the service layer.
 */
@Entity({ name: 'webhook_endpoints' })
@Index(['accountId', 'createdAt'])
export class WebhookEndpoint extends WithRotatingSecret(AccountOwned) {
  @Column({ type: 'text' })
  url: string;

  /** Subscribed event types, or `["*"]` for all. */
  @Column({ type: 'jsonb' })
  events: string[];

  @Column({ type: 'varchar', length: 500, default: '' })
  description: string;

  /** `glimpse-v1` (the spec's `t=…,v1=<hex>`) or `standard-webhooks`. */
  @Column({ name: 'signature_scheme', type: 'varchar', length: 32, default: 'glimpse-v1' })
  signatureScheme: SignatureScheme;

  /** A disabled endpoint gets no new deliveries; its scheduled retries end `exhausted`. */
  @Column({ type: 'boolean', default: true })
  enabled: boolean;

  /** Null while enabled. */
  @Column({ name: 'disabled_reason', type: 'varchar', length: 16, nullable: true })
  disabledReason: DisabledReason | null;

  /** When it was disabled; null while enabled. */
  @TimestampColumn('disabled_at', { nullable: true })
  disabledAt: Date | null;

  /**
   * Start of the auto-disable clock: the last successful attempt, or the creation or re-enabling of
   * the endpoint if later (CONTRACT.md "Webhooks", `WEBHOOK_DISABLE_AFTER_S`).
   */
  @TimestampColumn('healthy_at')
  healthyAt: Date;

  @TimestampColumn('created_at')
  createdAt: Date;

  @TimestampColumn('updated_at')
  updatedAt: Date;
}
