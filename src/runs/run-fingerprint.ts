import type { Request } from 'express';
import { canonicalJson } from '../common/canonical-json';
import { sha256Hex } from '../common/hashing';

/**
 * Idempotency fingerprint of `POST /v1/runs`: SHA-256 of the canonical JSON body with the `value` of
 * every `fill` step marked `sensitive` left out, so not even a hash of a secret is stored
 * (CONTRACT.md, "Browser session runs"). Two requests that differ only in a sensitive value
 * therefore count as the same request: a retry with another password replays the first run.
 */
export function runFingerprint(req: Request): string {
  const body = req.body as { steps?: unknown } | undefined;
  const steps = Array.isArray(body?.steps)
    ? body.steps.map((step: unknown) => {
        if (!step || typeof step !== 'object') return step;
        const { value, ...rest } = step as { action?: unknown; sensitive?: unknown; value?: unknown };
        return rest.action === 'fill' && rest.sensitive === true
          ? { ...rest, value: '[sensitive]' }
          : { ...rest, ...(value === undefined ? {} : { value }) };
      })
    : body?.steps;
  const redacted = body && typeof body === 'object' ? { ...body, ...(steps === undefined ? {} : { steps }) } : body;
  return sha256Hex(canonicalJson({ body: redacted ?? null, files: [] }));
}
