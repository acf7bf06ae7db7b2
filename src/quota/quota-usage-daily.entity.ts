import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { ApiKey } from '../auth/api-key.entity';

/**
 * Screenshots accepted for one API key on one UTC day: the dashboard's per-day usage chart. Written
 * in the same statement as {@link QuotaUsage} by {@link QuotaService}'s reserve and its release, so a
 * month's days always add up to its `quota_usage` row.
 */
@Entity({ name: 'quota_usage_daily' })
@Index(['day'])
export class QuotaUsageDaily {
  @PrimaryColumn({ name: 'api_key_id', type: 'varchar', length: 40 })
  apiKeyId: string;

  /** `YYYY-MM-DD` (UTC). */
  @PrimaryColumn({ type: 'date' })
  day: string;

  @ManyToOne(() => ApiKey, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'api_key_id' })
  apiKey?: ApiKey;

  @Column({ type: 'int' })
  used: number;
}
