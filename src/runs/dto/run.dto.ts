import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { CursorPageQueryDto } from '../../common/cursor-page-query.dto';
import { FAILURE_STAGES, FailureStage } from '../run-session';
import { STEP_ACTIONS, StepAction } from '../run-steps';
import { RUN_STATUSES, RunStatus } from '../run.entity';

/** One step's outcome in the run object. */
export class RunStepResultDto {
  @ApiProperty({ description: 'Position in `steps`, from 0', type: 'integer' })
  index: number;

  @ApiProperty({ enum: STEP_ACTIONS })
  action: StepAction;

  @ApiProperty({ enum: ['ok', 'failed', 'skipped'], description: '`skipped`: an earlier step failed (or the run ended) before this one' })
  status: 'ok' | 'failed' | 'skipped';

  @ApiProperty({ description: 'Time the step took, ms', type: 'integer' })
  durationMs: number;

  @ApiProperty({ type: 'string', nullable: true, description: 'Why the step failed (customer-safe); null unless failed' })
  error: string | null;

  @ApiProperty({ type: 'string', nullable: true, description: "Capability URL of a `screenshot` step's image; null for other steps" })
  screenshotUrl: string | null;

  @ApiProperty({
    description: 'JSON result of an `evaluate` step (at most 10 KiB); null for other steps',
    oneOf: [
      { type: 'object' },
      { type: 'array', items: {} },
      { type: 'string' },
      { type: 'number' },
      { type: 'boolean' },
      { type: 'null' },
    ],
  })
  result: unknown;
}

/** A console error of the page. */
export class RunConsoleErrorDto {
  @ApiProperty({ description: 'The message: a `console.error` call, or `Uncaught …` for an exception' })
  text: string;

  @ApiProperty({ type: 'string', nullable: true, description: 'Script URL, when known' })
  url: string | null;

  @ApiProperty({ type: 'integer', nullable: true, description: '0-based line in `url`, when known' })
  lineNumber: number | null;
}

/** A request of the page that failed or was answered 4xx/5xx. */
export class RunNetworkErrorDto {
  @ApiProperty()
  url: string;

  @ApiProperty({ example: 'GET' })
  method: string;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'HTTP status of a 4xx/5xx answer; null when the request failed without one',
  })
  status: number | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'Why it failed (`net::ERR_CONNECTION_REFUSED`, `Target not allowed: …`); null for a 4xx/5xx answer',
  })
  failure: string | null;
}

/** Where a failed run stopped. */
export class RunFailureDto {
  @ApiProperty({
    enum: FAILURE_STAGES,
    description:
      "`step`: a step (or the first page) failed; `timeout`: the run's budget ran out; `browser`: the browser crashed; " +
      '`worker`: the worker stopped mid-run; `finalize`: the video or files could not be stored; `canceled`: canceled by the customer',
  })
  stage: FailureStage;

  @ApiProperty({
    type: 'integer',
    nullable: true,
    description: 'The step running then (from 0); null before the first step (loading `url`) or after the last',
  })
  stepIndex: number | null;
}

/** A browser session run (CONTRACT.md, "Browser session runs"). */
@ApiExtraModels(RunFailureDto)
export class RunDto {
  @ApiProperty({ example: 'run_8cV1nQw3ZrT5yU7iO9pA2sD4' })
  id: string;

  @ApiProperty({ enum: RUN_STATUSES, description: 'pending → running → completed | failed' })
  status: RunStatus;

  @ApiProperty({ description: 'The first page, as submitted' })
  url: string;

  @ApiProperty({ type: 'string', nullable: true, description: 'URL of the page when the run ended' })
  finalUrl: string | null;

  @ApiProperty({ type: 'string', nullable: true, description: 'Title of that page' })
  pageTitle: string | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'Capability URL of the WebM video; null until the run ended, or without `video`',
  })
  videoUrl: string | null;

  @ApiProperty({ type: 'integer', description: 'Console errors of the page (all, beyond the 100 listed)' })
  consoleErrorCount: number;

  @ApiProperty({ type: 'integer', description: 'Network errors of the page (all, beyond the 100 listed)' })
  networkErrorCount: number;

  @ApiProperty({ type: [RunConsoleErrorDto], description: 'The first 100 console errors' })
  consoleErrors: RunConsoleErrorDto[];

  @ApiProperty({ type: [RunNetworkErrorDto], description: 'The first 100 network errors' })
  networkErrors: RunNetworkErrorDto[];

  @ApiProperty({ type: [RunStepResultDto], description: 'Outcome of each step that ended; every step once the run ended' })
  steps: RunStepResultDto[];

  @ApiProperty({
    type: 'string',
    nullable: true,
    description:
      'Why the run failed, customer-safe (e.g. `step 2 (click "#buy"): selector not visible within 10000 ms`); null unless failed',
  })
  finalizationError: string | null;

  @ApiProperty({
    oneOf: [{ $ref: getSchemaPath(RunFailureDto) }, { type: 'null' }],
    description: 'Where the run failed; null unless failed',
  })
  failure: RunFailureDto | null;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'The profile the completed run stored its browser state into (`saveProfile`); null otherwise',
    example: 'prf_4fQx9LmZ2pRt7YvB1nKc3sDw',
  })
  savedProfileId: string | null;

  @ApiProperty({ description: 'ISO 8601 UTC with milliseconds' })
  createdAt: string;

  @ApiProperty({ type: 'string', nullable: true, description: 'When a worker started the session' })
  startedAt: string | null;

  @ApiProperty({ type: 'string', nullable: true, description: 'When the run reached completed or failed' })
  completedAt: string | null;
}

/** Query of `GET /v1/runs`. */
export class ListRunsQueryDto extends CursorPageQueryDto {
  @ApiPropertyOptional({ enum: RUN_STATUSES, description: 'Only runs in this state' })
  @IsOptional()
  @IsIn(RUN_STATUSES)
  status?: RunStatus;
}

/** A page of runs, newest first. */
export class RunListDto {
  @ApiProperty({ type: [RunDto] })
  data: RunDto[];

  @ApiProperty({ type: 'string', nullable: true, description: 'Pass as `cursor` for the next page; null on the last page' })
  nextCursor: string | null;
}
