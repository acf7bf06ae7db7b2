import { documentErrorDetails } from '../common/api-error-responses.decorator';
import { PLANS } from '../accounts/plan';

/*
 * The `details` of the 429s this module throws, for every response documenting their codes
 * (`documentErrorDetails`). Imported by the files that build them (`quota.service.ts`,
 * `request-rate-limiter.ts`), so it is loaded before any controller that documents them.
 */

/**
 * 429 `PLAN_QUOTA_EXCEEDED`: which quota refused (the key's cap, or the account's ceiling over all its
 * keys), its usage, its limit and when it resets (spec section 7.2, CONTRACT.md "Quotas").
 */
documentErrorDetails(
  'PLAN_QUOTA_EXCEEDED',
  {
    scope: {
      type: 'string',
      enum: ['key', 'account'],
      description:
        "`key`: the API key reached its monthly cap; `account`: the account's keys together (revoked ones included) reached its monthly ceiling, the cap × the plan's active-key limit",
    },
    used: {
      type: 'integer',
      description: 'Screenshots used this month by the key (`scope: key`) or by all keys of the account (`scope: account`)',
    },
    limit: {
      type: 'integer',
      description: "Monthly cap per key of the plan (`scope: key`) or the account's monthly ceiling (`scope: account`)",
    },
    plan: { type: 'string', enum: [...PLANS] },
    resetAt: { type: 'string', format: 'date-time', description: '00:00 UTC on the 1st of next month' },
  },
  { scope: 'key', used: 100, limit: 100, plan: 'free', resetAt: '2026-12-01T00:00:00.000Z' },
);

/** 429 `RATE_LIMITED`: the key's per-second allowance (CONTRACT.md, "Rate limits and back-pressure"). */
documentErrorDetails(
  'RATE_LIMITED',
  {
    limit: {
      type: 'integer',
      description: 'Requests allowed per window for this API key (`RATE_LIMIT_PER_SECOND`; bursts up to twice that)',
    },
    windowSeconds: { type: 'integer', description: 'Length of the window, seconds (1)' },
  },
  { limit: 20, windowSeconds: 1 },
);
