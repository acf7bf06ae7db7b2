import { ApiProperty } from '@nestjs/swagger';
import { CAPTURE_LIMITS, CAPTURE_OPTION_NAMES, captureOptionJsonSchema, CaptureOptionsInput } from '../../capture/capture-options';
import { ArtifactJobFieldsDto } from '../../results/artifact-fields.dto';
import { JOB_FORMATS, JobFormat } from '../../results/result-formats';
import { JOB_STATUSES, JobStatus } from '../screenshot-job.entity';

/**
 * A screenshot job as returned by the API (spec section 2.1 plus CONTRACT.md's extra fields); its artifact
 * fields (`url`, `thumbnailUrl`, `extracted`, `storage`) and their schemas are those of the artifacts table
 * (src/results/artifacts.ts), inherited from {@link ArtifactJobFieldsDto}.
 */
export class ScreenshotJobDto extends ArtifactJobFieldsDto {
  @ApiProperty({ description: 'Job id', example: 'scr_8cV1nQw3ZrT5yU7iO9pA2sD4' })
  id: string;

  @ApiProperty({ enum: JOB_STATUSES, description: 'pending → processing → done | failed' })
  status: JobStatus;

  @ApiProperty({ type: 'string', nullable: true, description: 'Failure description; null unless status is failed' })
  error: string | null;

  @ApiProperty({ description: 'ISO 8601 UTC with milliseconds', example: '2026-11-20T12:00:00.000Z' })
  createdAt: string;

  @ApiProperty({ type: 'string', nullable: true, description: 'When the job reached done or failed (ISO 8601 UTC)' })
  completedAt: string | null;

  @ApiProperty({ enum: JOB_FORMATS })
  format: JobFormat;

  @ApiProperty({ description: 'Viewport width in px', type: 'integer' })
  width: number;

  @ApiProperty({ description: 'Viewport height in px', type: 'integer' })
  height: number;

  @ApiProperty()
  fullPage: boolean;

  @ApiProperty({
    description: `True when a full-page capture was cut: at fullPageMaxHeight (default ${CAPTURE_LIMITS.fullPageMaxHeightPx.toLocaleString('en-US')} image px), or where width × height × scale² reaches MAX_IMAGE_PIXELS (the image size cap)`,
  })
  clipped: boolean;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: "HTTP status of the page's main document (e.g. 200, 404); null for uploaded documents and when the page never answered",
    example: 200,
  })
  targetStatus: number | null;

  @ApiProperty({
    description:
      'True when the job reused a recent identical capture of the account (`cache: true`) instead of capturing; such a job is not counted against the quota',
  })
  cached: boolean;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'The crawl this job captures a page of (`POST /v1/crawls`); null for every other job',
    example: null,
  })
  crawlId: string | null;

  @ApiProperty({
    type: 'object',
    description: 'The capture options the job was given (as sent, without url and without defaults)',
    properties: Object.fromEntries(CAPTURE_OPTION_NAMES.map((name) => [name, captureOptionJsonSchema(name)])),
    additionalProperties: false,
    example: { width: 390, height: 844, fullPage: true, format: 'jpeg', quality: 70 },
  })
  options: CaptureOptionsInput;
}
