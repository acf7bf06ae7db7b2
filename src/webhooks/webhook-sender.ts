import { Injectable } from '@nestjs/common';

/** Characters of a response body kept in the delivery log (the issue: "a short excerpt" only). */
export const RESPONSE_EXCERPT_CHARS = 200;

/** Result of one HTTP attempt. */
export interface AttemptOutcome {
  /** True for a 2xx answer within the timeout. */
  ok: boolean;
  /** HTTP status when the receiver answered, else null. */
  responseCode: number | null;
  /** Why the attempt failed (null on success). */
  errorMessage: string | null;
}

/**
 * Sends one delivery attempt with Node's fetch (undici): POST, redirects not followed (a 3xx is a
 * failure), the whole exchange bounded by `timeoutMs`. Success is any 2xx status (spec section 3.2).
 * Never throws: every failure is an {@link AttemptOutcome} with `ok: false`.
 */
@Injectable()
export class WebhookSender {
  async send(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<AttemptOutcome> {
    const signal = AbortSignal.timeout(timeoutMs);
    let res: Response;
    try {
      res = await fetch(url, { method: 'POST', body, headers, redirect: 'manual', signal });
    } catch (err) {
      return { ok: false, responseCode: null, errorMessage: describeFetchError(err, timeoutMs) };
    }
    if (res.status >= 200 && res.status < 300) {
      await res.body?.cancel().catch(() => undefined);
      return { ok: true, responseCode: res.status, errorMessage: null };
    }
    const excerpt = await readExcerpt(res);
    const redirect = res.status >= 300 && res.status < 400 ? ' (redirects are not followed)' : '';
    return {
      ok: false,
      responseCode: res.status,
      errorMessage: `receiver answered ${res.status}${redirect}${excerpt ? `: ${excerpt}` : ''}`,
    };
  }
}

/** The first {@link RESPONSE_EXCERPT_CHARS} characters of the body on one line; '' when unreadable. */
async function readExcerpt(res: Response): Promise<string> {
  if (!res.body) return '';
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let text = '';
  try {
    while (text.length < RESPONSE_EXCERPT_CHARS) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    /* timeout or reset while reading: keep what arrived */
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return text.replace(/\s+/g, ' ').trim().slice(0, RESPONSE_EXCERPT_CHARS);
}

/** A readable reason for a fetch rejection: the timeout, or the network error code. */
function describeFetchError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `timed out after ${timeoutMs} ms`;
  const cause = e?.cause?.code ?? e?.cause?.message;
  return `request failed: ${cause ?? e?.message ?? String(err)}`;
}
