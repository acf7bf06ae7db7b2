import { createServer, IncomingMessage } from 'node:http';
import { AddressInfo } from 'node:net';
import { PassThrough } from 'node:stream';

/** `glimpse monitors create` sends the body docs/monitors.md describes (to a server on loopback that records it). */
describe('glimpse monitors (CLI)', () => {
  it('creates a monitor with a cron schedule in a zone, ignored selectors and capture options', async () => {
    const received: { method?: string; url?: string; body: string }[] = [];
    const server = createServer((req: IncomingMessage, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push({ method: req.method, url: req.url, body });
        res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify({ id: 'mon_4fQx9LmZ2pRt7YvB1nKc3sDw' }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const { main } = await import('../../openapi/sdk-typescript/src/cli');
    const stdout = new PassThrough();
    let out = '';
    stdout.on('data', (c) => (out += c));
    const code = await main(
      [
        '--base-url',
        `http://127.0.0.1:${port}`,
        '--api-key',
        'sk_live_test',
        'monitors',
        'create',
        'https://example.com',
        '--cron',
        '0 9 * * 1-5',
        '--cron-timezone',
        'Europe/Berlin',
        '--timezone',
        'Asia/Tokyo',
        '--ignore',
        '.clock',
        '#ad',
        '--width',
        '800',
      ],
      { stdout, stderr: stdout },
    );
    server.close();
    expect(out).toContain('mon_4fQx9LmZ2pRt7YvB1nKc3sDw');
    expect(code).toBe(0);
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ method: 'POST', url: '/v1/monitors' });
    expect(JSON.parse(received[0].body)).toEqual({
      url: 'https://example.com',
      schedule: { cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' },
      diff: { ignoreSelectors: ['.clock', '#ad'] },
      timezone: 'Asia/Tokyo',
      width: 800,
    });
  });
});
