import { Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { ApiKey } from '../auth/api-key.entity';
import { TimestampColumn } from '../common/timestamp-column';

/**
 * A `quota.warning` sent (or being sent) for one key, month and threshold. Its primary key is what
 * makes the warning fire once under concurrency: only the request whose insert creates the row publishes.
 */
@Entity({ name: 'quota_warnings' })
@Index(['month'])
export class QuotaWarning {
  @PrimaryColumn({ name: 'api_key_id', type: 'varchar', length: 40 })
  apiKeyId: string;

  /** First day of the month, `YYYY-MM-01`. */
  @PrimaryColumn({ type: 'date' })
  month: string;

  /** 80 or 95. */
  @PrimaryColumn({ name: 'threshold_percent', type: 'smallint' })
  thresholdPercent: number;

  @ManyToOne(() => ApiKey, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'api_key_id' })
  apiKey?: ApiKey;

  /** From the service clock. */
  @TimestampColumn('created_at')
  createdAt: Date;
}
