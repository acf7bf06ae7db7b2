import { request } from 'node:http';
import { loadConfigFromProcessEnv } from '../config/app-config';

/**
 * The container `HEALTHCHECK` (`node dist/health/healthcheck.js`; the image has no curl): exits 0 when
 * `GET /health` answers 200 on the API port (`PORT`) or, for a worker container, on
 * `WORKER_HEALTH_PORT`; 1 otherwise. Liveness only: readiness (`/ready`) is for load balancers.
 */
async function main(): Promise<void> {
  const config = loadConfigFromProcessEnv();
  for (const port of [config.port, config.workerHealthPort]) {
    if (await answers200(port)) process.exit(0);
  }
  process.exit(1);
}

function answers200(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/health', timeout: 3000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

void main();
