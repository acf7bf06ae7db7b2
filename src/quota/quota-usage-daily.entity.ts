import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { KeyScoped } from '../auth/key-scoped.entity';

/**
 * Screenshots accepted for one API key on one UTC day: the dashboard's per-day usage chart. Written
 * in the same statement as {@link QuotaUsage} by {@link QuotaService}'s reserve and its release, so a
 * month's days always add up to its `quota_usage` row.
 */
@Entity({ name: 'quota_usage_daily' })
@Index(['day'])
export class QuotaUsageDaily extends KeyScoped {
  /** `YYYY-MM-DD` (UTC). */
  @PrimaryColumn({ type: 'date' })
  day: string;

  @Column({ type: 'int' })
  used: number;
}
