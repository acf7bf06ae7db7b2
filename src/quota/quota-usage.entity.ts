import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { ApiKey } from '../auth/api-key.entity';

/**
 * Screenshots accepted for one API key in one calendar month (UTC). Written only by
 * {@link QuotaService}'s single-statement reserve and its release; a month without a row is unused.
 */
@Entity({ name: 'quota_usage' })
@Index(['month'])
export class QuotaUsage {
  @PrimaryColumn({ name: 'api_key_id', type: 'varchar', length: 40 })
  apiKeyId: string;

  /** First day of the month, `YYYY-MM-01`. */
  @PrimaryColumn({ type: 'date' })
  month: string;

  @ManyToOne(() => ApiKey, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'api_key_id' })
  apiKey?: ApiKey;

  @Column({ type: 'int' })
  used: number;
}
