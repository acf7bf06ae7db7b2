/** Bull queue names; payloads carry ids only, state lives in PostgreSQL (ARCHITECTURE.md). */
export const CAPTURE_QUEUE = 'captures';
export const HOUSEKEEPING_QUEUE = 'housekeeping';

/** Job names within the queues. */
export const CAPTURE_JOB = 'capture';
export const HOUSEKEEPING_SWEEP_JOB = 'sweep';

/** Payload of a capture queue job: the screenshot job id only. */
export interface CapturePayload {
  jobId: string;
}

/** Injection token: true when this process runs the queue processors (`WORKER_MODE=inline` or `worker.ts`). */
export const RUN_PROCESSORS = Symbol('RUN_PROCESSORS');
