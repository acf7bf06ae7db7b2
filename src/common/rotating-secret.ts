import { Column } from 'typeorm';
import { TimestampColumn } from './timestamp-column';

/** The columns of a secret rotated with overlap (webhook endpoints, render keys). */
export interface RotatingSecretColumns {
  secretSealed: string;
  previousSecretSealed: string | null;
  previousSecretExpiresAt: Date | null;
}

/**
 * `Base` (an entity base class such as `AccountOwned`) with the columns of a secret rotated with
 * overlap (CONTRACT.md "Webhooks" and "Render links", `rotate` with `expiresInSeconds`): `secret_sealed`,
 * the secret as sealed by `SecretCipher.seal` (bound to the row's id); `previous_secret_sealed`, the
 * secret before the last rotation while it still signs, else null; `previous_secret_expires_at`, until
 * when it does, else null. Entities extend `WithRotatingSecret(Base)`.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a mixin's base must take any arguments
export function WithRotatingSecret<B extends abstract new (...args: any[]) => object>(Base: B) {
  abstract class RotatingSecret extends Base implements RotatingSecretColumns {
    @Column({ name: 'secret_sealed', type: 'text' })
    secretSealed: string;

    @Column({ name: 'previous_secret_sealed', type: 'text', nullable: true })
    previousSecretSealed: string | null;

    @TimestampColumn('previous_secret_expires_at', { nullable: true })
    previousSecretExpiresAt: Date | null;
  }
  return RotatingSecret;
}

/**
 * The columns to write when `current` is replaced by `newSealed` at `now`: the old secret keeps signing
 * for `overlapS` s (the `rotate` body's `expiresInSeconds`, CONTRACT.md "Webhooks" and "Render links"),
 * and with 0 stops at once; a secret older than the old one always stops.
 */
export function rotatedSecret(current: RotatingSecretColumns, newSealed: string, overlapS: number, now: Date): RotatingSecretColumns {
  return {
    secretSealed: newSealed,
    previousSecretSealed: overlapS > 0 ? current.secretSealed : null,
    previousSecretExpiresAt: overlapS > 0 ? new Date(now.getTime() + overlapS * 1000) : null,
  };
}
