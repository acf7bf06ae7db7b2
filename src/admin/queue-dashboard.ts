import { createBullBoard } from '@bull-board/api';
import { BullAdapter } from '@bull-board/api/bullAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { INestApplication } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { createHash, timingSafeEqual } from 'node:crypto';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ServiceQueues } from '../metrics/queue-metrics';

/** Where the queue dashboard is served. */
export const QUEUE_DASHBOARD_PATH = '/admin/queues';

/**
 * Mounts bull-board (the operators' view of the capture, run, webhook and housekeeping queues: counts,
 * jobs, retry, clean) at {@link QUEUE_DASHBOARD_PATH} when `ADMIN_TOKEN` is set; off otherwise (the
 * path is then an unknown route, 404). Every request must carry the token, as
 * `Authorization: Bearer <ADMIN_TOKEN>` or, for a browser, HTTP Basic with the token as password
 * (any user name); otherwise 401.
 */
export function mountQueueDashboard(app: INestApplication): void {
  const config = app.get<AppConfig>(APP_CONFIG);
  if (!config.adminToken) return;
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    queues: app
      .get(ServiceQueues)
      .all()
      .map((queue) => new BullAdapter(queue)),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Glimpse queues' } },
  });
  app.use(QUEUE_DASHBOARD_PATH, adminTokenMiddleware(config.adminToken), serverAdapter.getRouter());
}

/** Express middleware admitting requests that present `token` (Bearer, or Basic password); 401 otherwise. */
export function adminTokenMiddleware(token: string) {
  const expected = sha256(token);
  return (req: Request, res: Response, next: NextFunction): void => {
    const presented = presentedToken(req.headers.authorization);
    if (presented !== null && timingSafeEqual(sha256(presented), expected)) return next();
    res
      .status(401)
      .setHeader('WWW-Authenticate', 'Basic realm="Glimpse queues", charset="UTF-8"')
      .type('text/plain')
      .send('ADMIN_TOKEN required (Authorization: Bearer <token>, or any user name with the token as password)\n');
  };
}

function presentedToken(header: string | undefined): string | null {
  const bearer = /^Bearer[ \t]+(\S+)\s*$/i.exec(header ?? '');
  if (bearer) return bearer[1];
  const basic = /^Basic[ \t]+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!basic) return null;
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 ? decoded.slice(colon + 1) : null;
}

function sha256(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
