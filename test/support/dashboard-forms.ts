import { randomBytes } from 'node:crypto';
import { IncomingHttpHeaders, request as httpRequest } from 'node:http';

/** One answer of the dashboard, as a browser would see it (no redirects followed). */
export interface FormAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

/**
 * Posts a signed-out dashboard form (double-submit CSRF: a `glimpse_csrf` cookie and the same value in
 * `_csrf`) from a given loopback source address, so tests can be several clients at once.
 */
export function postForm(
  baseUrl: string,
  path: string,
  fields: Record<string, string>,
  localAddress = '127.0.0.1',
  extraCookie = '',
): Promise<FormAnswer> {
  const csrf = randomBytes(16).toString('base64url');
  const body = new URLSearchParams({ _csrf: csrf, ...fields }).toString();
  const cookie = [`glimpse_csrf=${csrf}`, extraCookie].filter(Boolean).join('; ');
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${baseUrl}${path}`,
      {
        method: 'POST',
        localAddress,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The `glimpse_session` cookie a sign-in answer set, as `name=value`, or null. */
export function sessionCookieOf(answer: FormAnswer): string | null {
  const set = (answer.headers['set-cookie'] ?? [])
    .map((c) => c.split(';')[0])
    .find((c) => c.startsWith('glimpse_session=') && c.length > 'glimpse_session='.length);
  return set ?? null;
}

/** Counts answers by status, e.g. `{ 401: 10, 429: 30 }`. */
export function byStatus(answers: { status: number }[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const a of answers) counts[a.status] = (counts[a.status] ?? 0) + 1;
  return counts;
}
