import { Column, Entity, Index } from 'typeorm';
import { KeyOwnedWork } from '../auth/key-owned-work.entity';
import type { SessionOptions } from '../capture/capture-options';
import type { SaveProfileInput } from '../profiles/dto/profile.dto';
import type { ConsoleErrorEntry, NetworkErrorEntry } from './page-errors';
import type { FailureStage, StepOutcome } from './run-session';
import type { RunStep } from './run-steps';
import { TimestampColumn } from '../common/timestamp-column';

/** Run states (CONTRACT.md, "Browser session runs"): `pending` → `running` → `completed` | `failed`, never back. */
export const RUN_STATUSES = ['pending', 'running', 'completed', 'failed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** The session options of a run with their defaults applied (the capture options' session part). */
export type RunSessionOptions = SessionOptions;

/**
 * A step outcome as stored (the screenshot as a file name; the public URL is made when read). The
 * `evaluate` result is typed shallowly here: TypeORM's update types cannot expand a recursive JSON type.
 */
export type StoredStepOutcome = Omit<StepOutcome, 'result'> & { result: object | string | number | boolean | null };

/** One browser session run: what was asked (sensitive values excluded), its state and what it produced. */
@Entity({ name: 'runs' })
@Index(['accountId', 'createdAt'])
/** The pending runs by account: the turn check of fair share (`RunLifecycle.otherAccountsFirst`). */
@Index('IDX_runs_pending_by_account', ['accountId'], { where: `status = 'pending'` })
export class Run extends KeyOwnedWork {
  @Index()
  @Column({ type: 'varchar', length: 16 })
  status: RunStatus;

  /** The first page. */
  @Column({ type: 'text' })
  url: string;

  @Column({ type: 'jsonb' })
  options: RunSessionOptions;

  @Column({ type: 'boolean' })
  video: boolean;

  /** Where the context's state goes when the run completes (CONTRACT.md, "Browser profiles": `saveProfile`); null: nowhere. */
  @Column({ name: 'save_profile', type: 'jsonb', nullable: true })
  saveProfile: SaveProfileInput | null;

  /** The profile the completed run stored its state into; null until then, or without `saveProfile`. */
  @Column({ name: 'saved_profile_id', type: 'varchar', length: 40, nullable: true })
  savedProfileId: string | null;

  /** The run's budget, ms. */
  @Column({ name: 'timeout_ms', type: 'int' })
  timeoutMs: number;

  /** The steps as submitted, without the values of sensitive `fill` steps. */
  @Column({ type: 'jsonb' })
  steps: RunStep[];

  /** Outcomes of the steps that ended so far; every step once the run ended. */
  @Column({ name: 'step_results', type: 'jsonb', default: () => `'[]'` })
  stepResults: StoredStepOutcome[];

  @Column({ name: 'final_url', type: 'text', nullable: true })
  finalUrl: string | null;

  @Column({ name: 'page_title', type: 'text', nullable: true })
  pageTitle: string | null;

  /** Name of the video in storage. */
  @Column({ name: 'video_file', type: 'varchar', length: 64, nullable: true })
  videoFile: string | null;

  @Column({ name: 'console_error_count', type: 'int', default: 0 })
  consoleErrorCount: number;

  @Column({ name: 'network_error_count', type: 'int', default: 0 })
  networkErrorCount: number;

  @Column({ name: 'console_errors', type: 'jsonb', default: () => `'[]'` })
  consoleErrors: ConsoleErrorEntry[];

  @Column({ name: 'network_errors', type: 'jsonb', default: () => `'[]'` })
  networkErrors: NetworkErrorEntry[];

  @Column({ name: 'finalization_error', type: 'text', nullable: true })
  finalizationError: string | null;

  @Column({ type: 'jsonb', nullable: true })
  failure: { stage: FailureStage; stepIndex: number | null } | null;

  /** Times a worker claimed the run; a second claim means the first worker died mid-run. */
  @Column({ type: 'int', default: 0 })
  attempts: number;

  /** Set by `POST /v1/runs/:id/cancel` while the run is running; the worker ends it. */
  @TimestampColumn('cancel_requested_at', { nullable: true })
  cancelRequestedAt: Date | null;

  @TimestampColumn('created_at')
  createdAt: Date;

  @TimestampColumn('started_at', { nullable: true })
  startedAt: Date | null;

  @TimestampColumn('completed_at', { nullable: true })
  completedAt: Date | null;

  /** When the video and step screenshots were deleted (past `RESULT_TTL_DAYS`). */
  @TimestampColumn('results_deleted_at', { nullable: true })
  resultsDeletedAt: Date | null;
}
