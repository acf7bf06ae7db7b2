import { ERROR_CODES_BY_STATUS, ErrorResponseSpec } from '../common/api-error-responses.decorator';

/**
 * The 400 answers of a route that takes the `profile` option: the defaults plus
 * `PROFILE_DOMAIN_NOT_ALLOWED` (CONTRACT.md, "Browser profiles"; its `details`: `field`, `host`,
 * `allowedDomains`, as `TARGET_NOT_ALLOWED` names its `field`).
 */
export const PROFILE_USE_400: ErrorResponseSpec = {
  status: 400,
  codes: [...ERROR_CODES_BY_STATUS[400].codes, 'PROFILE_DOMAIN_NOT_ALLOWED'],
  description: "Invalid request, or a `profile` whose allowedDomains do not cover the target's host (nothing counted)",
};
