import { Column, Entity, Index, PrimaryColumn } from 'typeorm';
import { KeyScoped } from '../auth/key-scoped.entity';

/**
 * Screenshots accepted for one API key in one calendar month (UTC). Written only by
 * {@link QuotaService}'s single-statement reserve and its release; a month without a row is unused.
 */
@Entity({ name: 'quota_usage' })
@Index(['month'])
export class QuotaUsage extends KeyScoped {
  /** First day of the month, `YYYY-MM-01`. */
  @PrimaryColumn({ type: 'date' })
  month: string;

  @Column({ type: 'int' })
  used: number;
}
