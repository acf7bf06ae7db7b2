import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startOpsHttpServer } from '../../src/health/ops-http-server';
import { startTestApp, TestApp } from '../support/test-app';

const SECRET_KEY = 'a'.repeat(64);

/**
 * CONTRACT.md, "Health and readiness": with NODE_ENV=production, /metrics without METRICS_TOKEN answers
 * only on a separate METRICS_PORT or not at all (404), never on the public port unauthenticated.
 */
describe('/metrics in production', () => {
  describe('without METRICS_TOKEN', () => {
    let t: TestApp;
    let ops: Server;

    beforeAll(async () => {
      t = await startTestApp({ runProcessors: false, env: { NODE_ENV: 'production', WEBHOOK_SECRET_KEY: SECRET_KEY, METRICS_TOKEN: '' } });
      // What main.ts starts on METRICS_PORT (port 0 here: any free one).
      ops = await startOpsHttpServer(t.app, 0, '127.0.0.1');
    });

    afterAll(async () => {
      await new Promise((resolve) => ops?.close(resolve));
      await t?.close();
    });

    it('is 404 on the public port, with nothing of the registry in the body', async () => {
      expect(t.config.production).toBe(true);
      expect(t.config.metricsToken).toBeNull();
      const res = await fetch(`${t.baseUrl}/metrics`);
      expect(res.status).toBe(404);
      expect(await res.text()).not.toContain('glimpse_');
    });

    it('is served on the separate metrics port', async () => {
      const res = await fetch(`http://127.0.0.1:${(ops.address() as AddressInfo).port}/metrics`);
      expect(res.status).toBe(200);
      expect(await res.text()).toContain('# TYPE');
    });
  });

  describe('with METRICS_TOKEN', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await startTestApp({
        runProcessors: false,
        env: { NODE_ENV: 'production', WEBHOOK_SECRET_KEY: SECRET_KEY, METRICS_TOKEN: 'a-metrics-token-for-tests' },
      });
    });

    afterAll(async () => {
      await t?.close();
    });

    it('is 401 without the token and 200 with it on the public port', async () => {
      expect((await fetch(`${t.baseUrl}/metrics`)).status).toBe(401);
      const res = await fetch(`${t.baseUrl}/metrics`, { headers: { authorization: 'Bearer a-metrics-token-for-tests' } });
      expect(res.status).toBe(200);
    });
  });
});
