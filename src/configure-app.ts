import { INestApplication } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { IncomingMessage, RequestListener, Server, ServerResponse } from 'node:http';
import { SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { bodyParsingMiddleware, pathEncodingMiddleware } from './common/body-parsing';
import { bodyParsingRoutesOf } from './common/body-parsing-routes';
import { mountQueueDashboard } from './admin/queue-dashboard';
import { APP_CONFIG, AppConfig } from './config/app-config';
import { HttpExceptionFilter } from './common/http-exception.filter';
import { organizationIdMiddleware } from './common/organization-id';
import { createValidationPipe } from './common/validation';
import { InFlightRequests } from './health/in-flight-requests';
import { HttpObservability } from './metrics/http-observability';
import { ROOT_LOGGER } from './logging/logging.module';
import { RenderHitRoute } from './render/render-hit-route';
import { requestContextMiddleware } from './logging/request-log-context';
import type { Logger as PinoInstance } from 'pino';
import { buildOpenApiDocument } from './openapi/openapi-document';
import { WorkEndWaiter } from './queue/work-ended';

/**
 * The HTTP pipeline shared by `main.ts` and the tests: the pino logger, the in-flight count the
 * SIGTERM drain waits for and the render-link hit route (both in front of Express), request id, access line and
 * HTTP metrics, the `X-Organization-ID` check, undecodable paths as 404, body parsing with envelope
 * errors, the queue dashboard (`/admin/queues`, with `ADMIN_TOKEN`), the global error filter and
 * validation pipe, Swagger UI at
 * `/docs` (its OpenAPI document built once, on its first request), and the connection on which
 * `Prefer: wait` and render-link misses hear of ended work opened ahead ({@link WorkEndWaiter.openAhead}).
 * The app must be created with `bodyParser: false`.
 */
export function configureApp(app: INestApplication): void {
  const express = app.getHttpAdapter().getInstance();
  express.disable('x-powered-by');
  // Client IPs (the dashboard's sign-in limits) from X-Forwarded-For only through the proxies TRUST_PROXY names.
  express.set('trust proxy', app.get<AppConfig>(APP_CONFIG).trustProxy);
  app.useLogger(app.get(Logger));
  inFrontOfExpress(app);
  app.use(requestContextMiddleware(app.get<PinoInstance>(ROOT_LOGGER)));
  app.use(app.get(HttpObservability).middleware);
  app.use(organizationIdMiddleware);
  app.use(pathEncodingMiddleware);
  app.use(...bodyParsingMiddleware(bodyParsingRoutesOf(app)));
  mountQueueDashboard(app);
  app.useGlobalFilters(new HttpExceptionFilter());
  app.useGlobalPipes(createValidationPipe());
  // Built on the first request for it, not at boot: the document walks every route's metadata.
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs/openapi.json',
    swaggerOptions: { persistAuthorization: true },
  });
  app.get(WorkEndWaiter).openAhead();
}

/**
 * Puts the in-flight count (every request) and then the render-link hit route
 * ({@link RenderHitRoute}: fresh hits answered without Express, docs/render-links.md#performance) in
 * front of the Express app as the HTTP server's request handler; every other request goes on to Express.
 */
function inFrontOfExpress(app: INestApplication): void {
  const server = app.getHttpServer() as Server;
  const listeners = server.listeners('request') as RequestListener[];
  if (listeners.length !== 1) throw new Error(`expected Express as the only request listener, found ${listeners.length}`);
  const [express] = listeners;
  const inFlight = app.get(InFlightRequests).middleware;
  const hits = app.get(RenderHitRoute).handle;
  server.removeListener('request', express);
  server.on('request', (req: IncomingMessage, res: ServerResponse) =>
    inFlight(req as Request, res as Response, () => hits(req, res, () => void express(req, res))),
  );
}
