import { connect } from 'node:net';
import type { AppConfig } from '../config/app-config';
import { EgressProxy } from './egress-proxy';
import type { SsrfGuard } from './ssrf-guard';

describe('EgressProxy', () => {
  it('survives a browser resetting a CONNECT while its target is being checked (no uncaught read ECONNRESET)', async () => {
    // A slow check, as a DNS lookup is; the target is refused so nothing is dialled.
    const guard = {
      addressToConnect: () => new Promise<string>((_, reject) => setTimeout(() => reject(new Error('lookup failed')), 200)),
    } as unknown as SsrfGuard;
    const proxy = new EgressProxy(guard, { captureTimeoutMs: 1000 } as AppConfig);
    const [host, port] = (await proxy.start()).split(':');
    const open = () =>
      new Promise<ReturnType<typeof connect>>((resolve) => {
        const socket = connect(Number(port), host, () => resolve(socket));
        socket.on('error', () => undefined);
      });
    try {
      const reset = await open();
      reset.write('CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n');
      await new Promise((r) => setTimeout(r, 50));
      reset.resetAndDestroy();
      await new Promise((r) => setTimeout(r, 400));

      // The proxy is still up and answers the next CONNECT.
      const next = await open();
      const answer = new Promise<string>((resolve) => next.once('data', (d) => resolve(d.toString())));
      next.write('CONNECT example.test:443 HTTP/1.1\r\nHost: example.test:443\r\n\r\n');
      expect(await answer).toMatch(/^HTTP\/1\.1 502/);
      next.destroy();
    } finally {
      await proxy.close();
    }
  });
});
