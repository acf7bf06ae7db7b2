import type { SecretCipher } from '../common/secret-cipher';
import type { RunPayload } from '../queue/queues';

/**
 * The queue payload of a run with its sensitive `fill` values sealed under `WEBHOOK_SECRET_KEY(S)`
 * (AES-256-GCM bound to the run id; docs/runs.md, "Sensitive values"), so Redis, its AOF file and the
 * queue dashboard hold ciphertext only. Without a configured key the values are stored as they are
 * (development; production requires a key).
 */
export function sealedRunPayload(cipher: SecretCipher, runId: string, values: Record<number, string>): RunPayload {
  return Object.keys(values).length ? { runId, sealedValues: cipher.seal(JSON.stringify(values), `run:${runId}`) } : { runId };
}

/**
 * The sensitive values of a run's queue payload: opened from `sealedValues`, or read from the
 * unsealed `sensitiveValues` of an entry queued before sealing existed. Throws `SecretUnreadableError`
 * when the key that sealed them is no longer configured.
 */
export function openRunValues(cipher: SecretCipher, payload: RunPayload): Record<number, string> {
  if (payload.sealedValues) return JSON.parse(cipher.open(payload.sealedValues, `run:${payload.runId}`)) as Record<number, string>;
  return payload.sensitiveValues ?? {};
}
