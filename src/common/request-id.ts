import { randomBase62 } from './ids';

/** Incoming `X-Request-ID` values that are echoed (spec section 7.1). */
export const REQUEST_ID_PATTERN = /^[A-Za-z0-9_-]{8,64}$/;

/** The request id for a request: the incoming header if it matches the pattern, else `req_<random>`. */
export function resolveRequestId(incoming: string | string[] | undefined): string {
  const value = Array.isArray(incoming) ? incoming[0] : incoming;
  return value && REQUEST_ID_PATTERN.test(value) ? value : `req_${randomBase62(20)}`;
}
