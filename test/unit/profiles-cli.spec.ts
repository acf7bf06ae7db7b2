import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, IncomingMessage } from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';

/** `glimpse profiles add|list|delete` send what docs/profiles.md describes (to a server on loopback that records it). */
describe('glimpse profiles (CLI)', () => {
  const received: { method?: string; url?: string; body: string }[] = [];
  let base: string;
  let close: () => void;

  beforeAll(async () => {
    const server = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ method: req.method, url: req.url, body });
        if (req.method === 'DELETE') return res.writeHead(204).end();
        const answer = req.method === 'GET' ? { data: [], nextCursor: null } : { id: 'prf_4fQx9LmZ2pRt7YvB1nKc3sDw' };
        res.writeHead(req.method === 'POST' ? 201 : 200, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });

  afterAll(() => close());

  async function run(...args: string[]): Promise<{ code: number; out: string }> {
    const { main } = await import('../../openapi/sdk-typescript/src/cli');
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (c) => (out += c));
    const code = await main(['--base-url', base, '--api-key', 'sk_live_test', 'profiles', ...args], { stdout, stderr: stdout });
    return { code, out };
  }

  it('add sends a Playwright state file as it is, with the name and every --domain', async () => {
    const state = {
      cookies: [
        { name: 'sid', value: 'x', domain: 'app.example.com', path: '/', expires: -1, httpOnly: true, secure: true, sameSite: 'Lax' },
      ],
      origins: [{ origin: 'https://app.example.com', localStorage: [{ name: 'token', value: 't' }] }],
    };
    const file = join(mkdtempSync(join(tmpdir(), 'glimpse-cli-')), 'state.json');
    writeFileSync(file, JSON.stringify(state, null, 2));
    received.length = 0;
    const { code, out } = await run('add', file, '--name', 'Admin', '--domain', 'app.example.com', '*.example.org');
    expect(code).toBe(0);
    expect(out).toContain('prf_4fQx9LmZ2pRt7YvB1nKc3sDw');
    expect(received[0]).toMatchObject({ method: 'POST', url: '/v1/profiles' });
    expect(JSON.parse(received[0].body)).toEqual({
      name: 'Admin',
      allowedDomains: ['app.example.com', '*.example.org'],
      storageState: state,
    });
  });

  it('add without a file makes an empty profile; a file that is not JSON is a usage error with nothing sent', async () => {
    received.length = 0;
    expect((await run('add', '--name', 'Empty', '--domain', 'example.com')).code).toBe(0);
    expect(JSON.parse(received[0].body)).toEqual({ name: 'Empty', allowedDomains: ['example.com'] });
    const file = join(mkdtempSync(join(tmpdir(), 'glimpse-cli-')), 'broken.json');
    writeFileSync(file, '{ not json');
    received.length = 0;
    const broken = await run('add', file, '--name', 'Broken', '--domain', 'example.com');
    expect(broken.code).toBe(2);
    expect(broken.out).toContain('is not a readable JSON state file');
    expect(received).toHaveLength(0);
  });

  it('list and delete call the routes', async () => {
    received.length = 0;
    expect((await run('list', '--limit', '5')).code).toBe(0);
    expect((await run('delete', 'prf_4fQx9LmZ2pRt7YvB1nKc3sDw')).code).toBe(0);
    expect(received.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /v1/profiles?limit=5',
      'DELETE /v1/profiles/prf_4fQx9LmZ2pRt7YvB1nKc3sDw',
    ]);
  });
});
