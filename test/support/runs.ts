import { pollGet, TestApp } from './test-app';

/** Polls `GET /v1/runs/:id` until the run is `completed` or `failed` (at most `timeoutMs`). */
export async function waitForRun(t: TestApp, key: string, id: string, timeoutMs = 60_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  let status = 'unknown';
  for (;;) {
    const res = await pollGet(t, `/v1/runs/${id}`, key, deadline);
    if (res) {
      status = res.body.status;
      if (status === 'completed' || status === 'failed') return res.body;
    }
    if (Date.now() > deadline) throw new Error(`run ${id} still ${status} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** GETs a capability URL without an API key. */
export async function download(url: string): Promise<{ status: number; contentType: string | null; data: Buffer }> {
  const res = await fetch(url);
  return { status: res.status, contentType: res.headers.get('content-type'), data: Buffer.from(await res.arrayBuffer()) };
}
