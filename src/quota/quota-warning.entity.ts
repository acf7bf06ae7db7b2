import { Entity, Index, PrimaryColumn } from 'typeorm';
import { KeyScoped } from '../auth/key-scoped.entity';
import { TimestampColumn } from '../common/timestamp-column';

/**
 * A `quota.warning` sent (or being sent) for one key, month and threshold. Its primary key is what
 * makes the warning fire once under concurrency: only the request whose insert creates the row publishes.
 */
@Entity({ name: 'quota_warnings' })
@Index(['month'])
export class QuotaWarning extends KeyScoped {
  /** First day of the month, `YYYY-MM-01`. */
  @PrimaryColumn({ type: 'date' })
  month: string;

  /** 80 or 95. */
  @PrimaryColumn({ name: 'threshold_percent', type: 'smallint' })
  thresholdPercent: number;

  /** From the service clock. */
  @TimestampColumn('created_at')
  createdAt: Date;
}
