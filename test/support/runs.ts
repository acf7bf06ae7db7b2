import { TestApp, waitUntilEnded } from './test-app';

/** Waits for `GET /v1/runs/:id` to show the run `completed` or `failed` (at most `timeoutMs`); returns the run. */
export function waitForRun(t: TestApp, key: string, id: string, timeoutMs = 60_000): Promise<any> {
  return waitUntilEnded(t, `/v1/runs/${id}`, key, ['completed', 'failed'], timeoutMs);
}

/** GETs a capability URL without an API key. */
export async function download(url: string): Promise<{ status: number; contentType: string | null; data: Buffer }> {
  const res = await fetch(url);
  return { status: res.status, contentType: res.headers.get('content-type'), data: Buffer.from(await res.arrayBuffer()) };
}
