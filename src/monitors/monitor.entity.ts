import { Column, Entity, Index } from 'typeorm';
import { KeyOwnedWork } from '../auth/key-owned-work.entity';
import type { CaptureOptionsInput } from '../capture/capture-options';
import type { ImageRegion } from '../events/event-types';
import { TimestampColumn } from '../common/timestamp-column';

/** Why a monitor does not run (CONTRACT.md, "Monitors"); null while it runs. */
export const PAUSED_REASONS = ['manual', 'failing', 'key_revoked'] as const;
export type PausedReason = (typeof PAUSED_REASONS)[number];

/** A monitor's schedule: a fixed interval, or a five-field cron expression in an IANA time zone. */
export type MonitorSchedule = { intervalSeconds: number } | { cron: string; timezone: string };

/** A monitor's comparison settings, defaults applied. */
export interface MonitorDiffSettings {
  threshold: number;
  minChangeRatio: number;
  ignoreSelectors: string[];
  ignoreRegions: ImageRegion[];
}

/** The newest check that found a change. */
export interface MonitorLastChange {
  checkId: string;
  /** ISO 8601. */
  at: string;
  diffRatio: number;
}

/**
 * A monitor (CONTRACT.md, "Monitors"): a page captured on a schedule with its API key's quota and
 * compared with the previous (or a pinned) image. `next_check_at` is the durable schedule: every
 * worker's tick claims due rows with `FOR UPDATE SKIP LOCKED`. Its id is `mon_…`; `apiKeyId` is the API key
 * whose quota the checks use (its revocation pauses the monitor).
 */
@Entity({ name: 'monitors' })
@Index(['accountId', 'createdAt'])
// The scheduler's look-up of due monitors (src/monitors/monitor-scheduler.ts).
@Index('IDX_monitors_due', ['nextCheckAt'], { where: 'enabled' })
export class Monitor extends KeyOwnedWork {
  /** The page to capture. */
  @Column({ type: 'text' })
  url: string;

  /** The capture options as given (public names). */
  @Column({ type: 'jsonb', default: () => "'{}'" })
  options: CaptureOptionsInput;

  @Column({ type: 'jsonb' })
  schedule: MonitorSchedule;

  @Column({ type: 'jsonb' })
  diff: MonitorDiffSettings;

  @Column({ type: 'boolean', default: true })
  enabled: boolean;

  @Column({ name: 'paused_reason', type: 'varchar', length: 16, nullable: true })
  pausedReason: PausedReason | null;

  @Column({ type: 'varchar', length: 500, default: '' })
  description: string;

  /** The check whose image is the pinned baseline; null: each check is compared with the last successful one. */
  @Column({ name: 'baseline_check_id', type: 'varchar', length: 40, nullable: true })
  baselineCheckId: string | null;

  @TimestampColumn('created_at')
  createdAt: Date;

  @TimestampColumn('updated_at')
  updatedAt: Date;

  @TimestampColumn('last_check_at', { nullable: true })
  lastCheckAt: Date | null;

  /** When the next scheduled check is due; null while paused. */
  @TimestampColumn('next_check_at', { nullable: true })
  nextCheckAt: Date | null;

  @Column({ name: 'consecutive_failures', type: 'int', default: 0 })
  consecutiveFailures: number;

  @Column({ name: 'last_change', type: 'jsonb', nullable: true })
  lastChange: MonitorLastChange | null;
}
