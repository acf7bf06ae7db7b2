import { Column, CreateDateColumn, Entity, JoinColumn, OneToOne, PrimaryColumn } from 'typeorm';
import { ScreenshotJob } from './screenshot-job.entity';

/**
 * The HTML document of an upload job (`POST /v1/screenshot/upload`), kept until the job ends so the
 * worker, in whatever process, can render it; deleted with the job or when the job reaches done or failed.
 */
@Entity({ name: 'screenshot_uploads' })
export class ScreenshotUpload {
  /** The job's id (`scr_…`). */
  @PrimaryColumn({ name: 'job_id', type: 'varchar', length: 40 })
  jobId: string;

  @OneToOne(() => ScreenshotJob, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'job_id' })
  job?: ScreenshotJob;

  /** The document's bytes, as uploaded (at most 10 MiB). */
  @Column({ type: 'bytea' })
  document: Buffer;

  /** Hex SHA-256 of `document`. */
  @Column({ type: 'varchar', length: 64 })
  sha256: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
