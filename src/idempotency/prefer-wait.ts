import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { WorkEndWaiter } from '../queue/work-ended';
import { IdempotencyService } from './idempotency.service';

/** The longest `Prefer: wait=N` honoured, in seconds (CONTRACT.md, "Synchronous answers"). */
export const PREFER_WAIT_MAX_S = 60;

/**
 * The `wait` preference of a request's `Prefer` headers (RFC 7240 section 4.3: `wait=N`, delta
 * seconds), in whole seconds 1–{@link PREFER_WAIT_MAX_S}; null when absent or out of that range (any
 * other `Prefer` value is ignored, CONTRACT.md "Synchronous answers"). Preferences are separated by
 * commas, a value may be quoted, names are case-insensitive, and the first `wait` counts.
 */
export function preferredWaitSeconds(header: string | string[] | undefined): number | null {
  const values = Array.isArray(header) ? header : header === undefined ? [] : [header];
  for (const preference of values.flatMap((value) => value.split(','))) {
    const [token] = preference.split(';');
    const match = /^\s*wait\s*=\s*"?(\d{1,6})"?\s*$/i.exec(token);
    if (!match) continue;
    const seconds = Number(match[1]);
    return seconds >= 1 && seconds <= PREFER_WAIT_MAX_S ? seconds : null;
  }
  return null;
}

/** An accepted job or run as a route answers it: `id` and `status`. */
export interface AcceptedWork {
  id: string;
  status: string;
}

/**
 * `Prefer: wait=N` on the work-creating routes (CONTRACT.md, "Synchronous answers"): waits up to N
 * seconds for the accepted job or run to end (without polling: {@link WorkEndWaiter}), and when it
 * does, answers 200 with the ended object and `Preference-Applied: wait=N`, storing that answer as the
 * request's `Idempotency-Key` response so a replay answers what the first request answered. Otherwise
 * the route's usual answer (202) is left as it is.
 */
@Injectable()
export class PreferWait {
  constructor(
    private readonly waiter: WorkEndWaiter,
    private readonly idempotency: IdempotencyService,
  ) {}

  /**
   * The answer to send for `accepted`: `accepted` itself without a usable `wait` preference or when
   * the work did not end in time; else the ended object as `reload(id)` reads it (status 200 and
   * `Preference-Applied` set on `res`). `isEnded` tells an ended object from an open one.
   */
  async answer<T extends AcceptedWork>(
    req: Request,
    res: Response,
    accepted: T,
    reload: (id: string) => Promise<T>,
    isEnded: (work: T) => boolean,
  ): Promise<T> {
    const seconds = preferredWaitSeconds(req.headers.prefer);
    if (seconds === null) return accepted;
    const ended = isEnded(accepted)
      ? accepted
      : await this.waiter.waitForEnd(accepted.id, seconds * 1000, async () => {
          const now = await reload(accepted.id);
          return isEnded(now) ? now : null;
        });
    if (!ended) return accepted;
    const held = this.idempotency.heldKey();
    if (held) await this.idempotency.replaceStored(held, 200, JSON.stringify(ended));
    res.status(200).setHeader('Preference-Applied', `wait=${seconds}`);
    return ended;
  }
}
