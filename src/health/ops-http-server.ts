import { INestApplicationContext } from '@nestjs/common';
import { createServer, Server } from 'node:http';
import { MetricsEndpoint } from '../metrics/metrics-endpoint';
import { HealthService } from './health.service';

/**
 * The worker's HTTP port (`WORKER_HEALTH_PORT`): `GET /health`, `GET /ready` and `GET /metrics`,
 * answered by the same services as the API's routes; anything else is 404. Resolves once listening.
 */
export async function startOpsHttpServer(app: INestApplicationContext, port: number, host?: string): Promise<Server> {
  const health = app.get(HealthService);
  const metrics = app.get(MetricsEndpoint);
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, contentType: string, body: string) => {
      res.writeHead(status, { 'Content-Type': contentType, 'Cache-Control': 'no-store' }).end(body);
    };
    const answer = async () => {
      if (req.method !== 'GET' && req.method !== 'HEAD') return send(405, 'text/plain', 'Method not allowed\n');
      if (path === '/health') {
        const h = health.liveness();
        return send(h.status, 'application/json; charset=utf-8', JSON.stringify(h.body));
      }
      if (path === '/ready') {
        const r = await health.readiness();
        return send(r.status, 'application/json; charset=utf-8', JSON.stringify(r.body));
      }
      if (path === '/metrics') {
        const m = await metrics.scrape(req.headers.authorization);
        if (m.status === 401) res.setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
        return send(m.status, m.contentType, m.body);
      }
      send(404, 'text/plain', 'Not found: this port serves /health, /ready and /metrics\n');
    };
    answer().catch(() => send(500, 'text/plain', 'Internal error\n'));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
