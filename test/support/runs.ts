import { TestApp } from './test-app';

/** Polls `GET /v1/runs/:id` until the run is `completed` or `failed` (at most `timeoutMs`). */
export async function waitForRun(t: TestApp, key: string, id: string, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await t.request('GET', `/v1/runs/${id}`, { key });
    if (res.body.status === 'completed' || res.body.status === 'failed') return res.body;
    if (Date.now() > deadline) throw new Error(`run ${id} still ${res.body.status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** GETs a capability URL without an API key. */
export async function download(url: string): Promise<{ status: number; contentType: string | null; data: Buffer }> {
  const res = await fetch(url);
  return { status: res.status, contentType: res.headers.get('content-type'), data: Buffer.from(await res.arrayBuffer()) };
}
