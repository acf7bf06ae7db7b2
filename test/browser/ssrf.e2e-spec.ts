import { AddressPolicy, blockedAddressReason } from '../../src/egress/address-policy';
import { EgressProxy } from '../../src/egress/egress-proxy';
import { HostResolver } from '../../src/egress/host-resolver';
import { PageServer, startPageServer } from '../support/page-server';
import { startTestApp, TestApp, waitForJob } from '../support/test-app';

/**
 * The SSRF guard with `SSRF_ALLOW_PRIVATE=false`, on loopback only: the address policy is replaced
 * by one that treats 127.0.0.2 as a public address (the "internet") and everything else as usual,
 * so 127.0.0.1 stands for the private network. Made-up names resolve through the guard's resolver stub.
 */
describe('SSRF guard: every request the page makes goes through the checking proxy', () => {
  const PUBLIC = '127.0.0.2';
  let t: TestApp;
  let key: string;
  let internal: PageServer; // 127.0.0.1: must never be reached
  let site: PageServer; // 127.0.0.2: allowed
  let rebindLookups = 0;

  const testPolicy = { blockedReason: (address: string) => (address === PUBLIC ? null : blockedAddressReason(address)) };

  beforeAll(async () => {
    internal = await startPageServer({ '/': '<h1>internal secret</h1>', '/secret': '<h1>internal secret</h1>' });
    const loopbackForms = (path: string) => [
      `http://127.0.0.1:${internal.port}${path}`,
      `http://[::ffff:127.0.0.1]:${internal.port}${path}`,
      `http://2130706433:${internal.port}${path}`,
      `http://localhost:${internal.port}${path}`,
    ];
    site = await startPageServer(
      {
        '/': '<html><body><h1>public page</h1></body></html>',
        '/redirect': (_req, res) => res.writeHead(302, { location: `http://127.0.0.1:${internal.port}/secret` }).end(),
        '/redirect-file': (_req, res) => res.writeHead(302, { location: 'file:///etc/hostname' }).end(),
        '/subresources': `<html><body><h1>public page with internal subresources</h1>
          ${loopbackForms('/img.png')
            .map((src) => `<img src="${src}">`)
            .join('\n')}
          <img src="https://127.0.0.1:${internal.port}/img.png">
          <iframe src="http://127.0.0.1:${internal.port}/frame"></iframe>
          <link rel="stylesheet" href="http://localhost:${internal.port}/style.css">
          <script>
            fetch('http://127.0.0.1:${internal.port}/fetch').catch(() => {});
            try { new WebSocket('ws://127.0.0.1:${internal.port}/ws'); } catch (e) {}
            try { new WebSocket('wss://127.0.0.1:${internal.port}/wss'); } catch (e) {}
            const x = new XMLHttpRequest(); x.open('GET', 'http://2130706433:${internal.port}/xhr'); x.send();
          </script></body></html>`,
      },
      PUBLIC,
    );
    t = await startTestApp({
      env: { SSRF_ALLOW_PRIVATE: 'false', CAPTURE_TIMEOUT_MS: '5000' },
      override: (b) =>
        b
          .overrideProvider(AddressPolicy)
          .useValue(testPolicy)
          .overrideProvider(HostResolver)
          .useValue({
            resolve: async (host: string) => {
              if (host === 'allowed.test') return [PUBLIC];
              if (host === 'localhost') return ['127.0.0.1'];
              // Public when the API checks it, private when the browser connects: DNS rebinding.
              if (host === 'rebind.test') return ++rebindLookups === 1 ? [PUBLIC] : ['127.0.0.1'];
              throw Object.assign(new Error(`no such host ${host}`), { code: 'ENOTFOUND' });
            },
          }),
    });
    ({ key } = await t.createKey());
  });

  afterAll(async () => {
    await t.close();
    await site.close();
    await internal.close();
  });

  async function submit(url: string) {
    return t.request('POST', '/v1/screenshot', { key, body: { url, width: 400, height: 300 } });
  }

  async function capture(url: string) {
    const res = await submit(url);
    expect(res.status).toBe(202);
    return waitForJob(t, key, res.body.id);
  }

  it.each([
    ['loopback IPv4', (p: number) => `http://127.0.0.1:${p}/`],
    ['IPv4-mapped IPv6 literal', (p: number) => `http://[::ffff:127.0.0.1]:${p}/`],
    ['decimal IP literal', (p: number) => `http://2130706433:${p}/`],
    ['hexadecimal IP literal', (p: number) => `http://0x7f000001:${p}/`],
    ['IPv6 loopback', (p: number) => `http://[::1]:${p}/`],
    ['localhost', (p: number) => `http://localhost:${p}/`],
    ['cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/'],
  ])('refuses a %s at submission with 400 TARGET_NOT_ALLOWED', async (_name, url) => {
    const res = await submit(url(internal.port));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('TARGET_NOT_ALLOWED');
  });

  it('captures an allowed host reached by name through the proxy', async () => {
    const job = await capture(`http://allowed.test:${site.port}/`);
    expect(job).toMatchObject({ status: 'done', error: null });
  });

  it('fails a job redirected from an allowed host to a blocked one, without reaching it', async () => {
    const before = internal.connections();
    const job = await capture(`http://allowed.test:${site.port}/redirect`);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/^Target not allowed: 127\.0\.0\.1 is a blocked address \(loopback\)/);
    expect(internal.connections()).toBe(before);
  });

  it('fails a job redirected to a file: URL', async () => {
    const job = await capture(`http://allowed.test:${site.port}/redirect-file`);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/^net::ERR_/);
  });

  it('blocks images, iframes, stylesheets, fetch, XHR and WebSockets aimed at blocked addresses, in every spelling', async () => {
    const before = internal.connections();
    const job = await capture(`http://allowed.test:${site.port}/subresources`);
    expect(job).toMatchObject({ status: 'done', error: null });
    expect(internal.connections()).toBe(before);
    // Each of them was attempted and refused by the proxy, not merely left out by the browser.
    const proxy = t.get(EgressProxy);
    for (const host of ['127.0.0.1', 'localhost', '::ffff:7f00:1']) {
      expect(proxy.recentFailure(host, internal.port)).toMatch(/^Target not allowed/);
    }
  });

  it('defeats DNS rebinding: a name that resolves public at submission and private at connection is refused', async () => {
    rebindLookups = 0;
    const before = internal.connections();
    const job = await capture(`http://rebind.test:${internal.port}/`);
    expect(rebindLookups).toBeGreaterThanOrEqual(2);
    expect(job.status).toBe('failed');
    expect(job.error).toMatch(/^Target not allowed: rebind\.test resolves to a blocked address \(loopback\)/);
    expect(internal.connections()).toBe(before);
  });

  it('renders an uploaded document whose subresources aim at blocked addresses without reaching them', async () => {
    const before = internal.connections();
    const form = new FormData();
    const html = `<html><body><h1>uploaded</h1><img src="http://127.0.0.1:${internal.port}/img.png">
      <img src="http://localhost:${internal.port}/img.png"><iframe src="http://[::ffff:127.0.0.1]:${internal.port}/"></iframe>
      <script>fetch('http://2130706433:${internal.port}/fetch').catch(() => {})</script>
      <img src="http://allowed.test:${site.port}/"></body></html>`;
    form.append('file', new Blob([html], { type: 'text/html' }), 'page.html');
    const res = await fetch(`${t.baseUrl}/v1/screenshot/upload`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}` },
      body: form,
    });
    expect(res.status).toBe(202);
    const job = await waitForJob(t, key, ((await res.json()) as { id: string }).id);
    expect(job).toMatchObject({ status: 'done', error: null });
    expect(internal.connections()).toBe(before);
  });

  it('fails a name that does not resolve with the browser error', async () => {
    const job = await capture(`http://nowhere.test:${site.port}/`);
    expect(job).toMatchObject({ status: 'failed', error: 'net::ERR_NAME_NOT_RESOLVED' });
  });
});
