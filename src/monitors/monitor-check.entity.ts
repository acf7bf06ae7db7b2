import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import type { ImageRegion } from '../events/event-types';
import { Monitor } from './monitor.entity';
import { TimestampColumn } from '../common/timestamp-column';

/** A check's states: `pending` while its capture runs and it is compared, then one of the four ends (CONTRACT.md, "Monitors"). */
export const CHECK_STATUSES = ['pending', 'baseline', 'unchanged', 'changed', 'failed'] as const;
export type CheckStatus = (typeof CHECK_STATUSES)[number];

/**
 * One check of a monitor (CONTRACT.md, "Monitors"): an ordinary capture job (`job_id`) and, once it
 * ended, its comparison with the baseline image. Kept 90 days.
 */
@Entity({ name: 'monitor_checks' })
@Index(['monitorId', 'createdAt'])
@Index(['accountId', 'createdAt'])
// The comparison sweep and the "previous check still running" rule look at open checks only.
@Index('IDX_monitor_checks_open', ['monitorId'], { where: `status = 'pending'` })
export class MonitorCheck {
  /** `chk_…` */
  @PrimaryColumn({ type: 'varchar', length: 40 })
  id: string;

  @Column({ name: 'monitor_id', type: 'varchar', length: 40 })
  monitorId: string;

  @ManyToOne(() => Monitor, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'monitor_id' })
  monitor?: Monitor;

  @Column({ name: 'account_id', type: 'varchar', length: 40 })
  accountId: string;

  /** The capture job (`scr_…`); null when it could not be accepted (quota). */
  @Index()
  @Column({ name: 'job_id', type: 'varchar', length: 40, nullable: true })
  jobId: string | null;

  @Column({ type: 'varchar', length: 16 })
  status: CheckStatus;

  /** The result file of the capture (the check's image), once done. */
  @Column({ name: 'screenshot_file', type: 'varchar', length: 200, nullable: true })
  screenshotFile: string | null;

  /** The check whose image this one was compared with. */
  @Column({ name: 'baseline_check_id', type: 'varchar', length: 40, nullable: true })
  baselineCheckId: string | null;

  @Column({ name: 'baseline_file', type: 'varchar', length: 200, nullable: true })
  baselineFile: string | null;

  /** The comparison PNG, for a change. */
  @Column({ name: 'diff_file', type: 'varchar', length: 200, nullable: true })
  diffFile: string | null;

  @Column({ name: 'diff_ratio', type: 'double precision', nullable: true })
  diffRatio: number | null;

  @Column({ name: 'diff_pixels', type: 'int', nullable: true })
  diffPixels: number | null;

  @Column({ type: 'jsonb', default: () => "'[]'" })
  regions: ImageRegion[];

  /** Customer-safe failure description. */
  @Column({ type: 'text', nullable: true })
  error: string | null;

  @TimestampColumn('created_at')
  createdAt: Date;

  /** When a worker started comparing (a crashed comparison is taken again after a while). */
  @TimestampColumn('compare_started_at', { nullable: true })
  compareStartedAt: Date | null;

  @TimestampColumn('completed_at', { nullable: true })
  completedAt: Date | null;
}
