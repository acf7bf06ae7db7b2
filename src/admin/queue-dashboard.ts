import { INestApplication } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { timingSafeEqual } from 'node:crypto';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ServiceQueues } from '../metrics/queue-metrics';
import { bearerToken } from '../common/bearer-token';
import { sha256Bytes } from '../common/hashing';

/** Where the queue dashboard is served. */
export const QUEUE_DASHBOARD_PATH = '/admin/queues';

/**
 * Mounts bull-board (the operators' view of the capture, run, webhook and housekeeping queues: counts,
 * jobs, retry, clean) at {@link QUEUE_DASHBOARD_PATH} when `ADMIN_TOKEN` is set; off otherwise (the
 * path is then an unknown route, 404). Every request must carry the token, as
 * `Authorization: Bearer <ADMIN_TOKEN>` or, for a browser, HTTP Basic with the token as password
 * (any user name); otherwise 401. bull-board is loaded and set up on the first admitted request, so a
 * process whose operators never open it does not load it (docs/performance.md, "Boot").
 */
export function mountQueueDashboard(app: INestApplication): void {
  const config = app.get<AppConfig>(APP_CONFIG);
  if (!config.adminToken) return;
  const queues = app.get(ServiceQueues);
  let router: Promise<RequestHandler> | undefined;
  app.use(QUEUE_DASHBOARD_PATH, adminTokenMiddleware(config.adminToken), (req: Request, res: Response, next: NextFunction) => {
    router ??= queueDashboardRouter(queues);
    router.then(
      (handle) => handle(req, res, next),
      (err: unknown) => {
        router = undefined;
        next(err);
      },
    );
  });
}

/** bull-board over every queue of the service, as an Express router to mount at {@link QUEUE_DASHBOARD_PATH}. */
async function queueDashboardRouter(queues: ServiceQueues): Promise<RequestHandler> {
  const [{ createBullBoard }, { BullAdapter }, { ExpressAdapter }] = await Promise.all([
    import('@bull-board/api'),
    import('@bull-board/api/bullAdapter'),
    import('@bull-board/express'),
  ]);
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
  createBullBoard({
    queues: queues.all().map((queue) => new BullAdapter(queue)),
    serverAdapter,
    options: { uiConfig: { boardTitle: 'Glimpse queues' } },
  });
  return serverAdapter.getRouter();
}

/** Express middleware admitting requests that present `token` (Bearer, or Basic password); 401 otherwise. */
export function adminTokenMiddleware(token: string) {
  const expected = sha256Bytes(token);
  return (req: Request, res: Response, next: NextFunction): void => {
    const presented = presentedToken(req.headers.authorization);
    if (presented !== null && timingSafeEqual(sha256Bytes(presented), expected)) return next();
    res
      .status(401)
      .setHeader('WWW-Authenticate', 'Basic realm="Glimpse queues", charset="UTF-8"')
      .type('text/plain')
      .send('ADMIN_TOKEN required (Authorization: Bearer <token>, or any user name with the token as password)\n');
  };
}

function presentedToken(header: string | undefined): string | null {
  const bearer = bearerToken(header);
  if (bearer !== null) return bearer;
  const basic = /^Basic[ \t]+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
  if (!basic) return null;
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 ? decoded.slice(colon + 1) : null;
}
