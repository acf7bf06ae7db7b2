import { documentErrorDetails, ERROR_CODES_BY_STATUS, ErrorResponseSpec } from '../common/api-error-responses.decorator';

/** 400 `PROFILE_DOMAIN_NOT_ALLOWED`: the field, the target's host and the profile's domains (CONTRACT.md, "Browser profiles"). */
documentErrorDetails(
  'PROFILE_DOMAIN_NOT_ALLOWED',
  {
    field: { type: 'string', description: 'The option naming the profile (`profile`, `items[2].profile`)' },
    host: { type: 'string', description: "The target URL's host" },
    allowedDomains: { type: 'array', items: { type: 'string' }, description: "The profile's allowedDomains" },
  },
  { field: 'profile', host: 'www.example.org', allowedDomains: ['app.example.com'] },
);

/** The 400 answers of a route that takes the `profile` option: the defaults plus `PROFILE_DOMAIN_NOT_ALLOWED`. */
export const PROFILE_USE_400: ErrorResponseSpec = {
  status: 400,
  codes: [...ERROR_CODES_BY_STATUS[400].codes, 'PROFILE_DOMAIN_NOT_ALLOWED'],
  description: "Invalid request, or a `profile` whose allowedDomains do not cover the target's host (nothing counted)",
};
