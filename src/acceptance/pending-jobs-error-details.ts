import { documentErrorDetails } from '../common/api-error-responses.decorator';

/**
 * 429 `TOO_MANY_PENDING_JOBS`: the account's limit and its work not yet ended (CONTRACT.md, "Rate
 * limits and back-pressure"), for every response documenting the code (`documentErrorDetails`).
 * Imported by `pending-jobs-limit.ts`, which builds these details.
 */
documentErrorDetails(
  'TOO_MANY_PENDING_JOBS',
  {
    limit: { type: 'integer', description: 'Jobs and runs not yet ended that the account may have (`MAX_PENDING_JOBS_PER_ACCOUNT`)' },
    pending: { type: 'integer', description: 'Jobs and runs of the account not yet ended' },
  },
  { limit: 10000, pending: 10000 },
);
