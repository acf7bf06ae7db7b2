import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import { canonicalizeDocument, toOpenApi31Schemas } from './canonical-document';
import { referenceCaptureOptions } from './capture-options-schema';
import { addOperationalHeaders, operationsOf } from './operational-headers';
import { WEBHOOK_EVENT_SCHEMAS } from '../webhooks/dto';
import { WEBHOOK_EVENT_EXAMPLES } from './webhook-event-examples';
import { addWebhooks, SIGNATURE_SCHEME } from './webhooks-section';

/** Descriptions of the tags operations use; an operation tag missing here fails `npm run openapi:lint`. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  screenshots:
    'Capture jobs: enqueue a capture, poll it until `done` or `failed`, then fetch the result URL (no API key needed for the file).',
  webhooks: SIGNATURE_SCHEME,
  runs:
    'Browser session runs: a fresh browser session performs your steps (fill, click, wait, screenshot, …) with a video, console and network errors; ' +
    'poll the run or receive `run.completed` / `run.failed`.',
  render:
    "Render links: a signed URL that answers with the image itself (for `<img src>`, `og:image`, e-mails), signed with a render key's secret " +
    '(HMAC-SHA256 over the canonical query), cached and published without an API key. Sign on a server, never in a browser.',
  monitors:
    'Monitors: a page captured on a schedule (interval or cron) and compared with the previous image; a change fires `monitor.changed` with the ' +
    'changed regions and a diff image. Each check is an ordinary capture job, counted against the monitor’s API key.',
  crawls:
    'Crawls: a whole site discovered (robots.txt, sitemaps, links) and captured, one ordinary capture job per page counted when created; ' +
    'when every job ended, one ZIP of every result and `manifest.json`, and `crawl.completed` / `crawl.failed`.',
  storage:
    'Storage destinations: your own S3-compatible buckets that results are uploaded to (capture option `storage`), credentials stored sealed ' +
    'and never returned; or a presigned PUT URL per capture (capture option `upload`).',
  profiles:
    'Browser profiles: saved logged-in browser states (cookies and local storage, Playwright storage state) bound to their domains, sealed at ' +
    'rest and never returned; captures, monitors, render links and runs start with one (option `profile`), and a run records one (`saveProfile`).',
};

const DESCRIPTION = [
  'Self-hostable screenshot capture: submit a URL, poll the job until `done`, fetch the result URL.',
  '',
  '- **Authentication**: every request carries `Authorization: Bearer <API_KEY>` (`sk_live_…`).',
  '- **Errors**: every error is `{ error, code, requestId, details? }`; each response lists its possible `code` values. Treat unknown codes as transient.',
  '- **Operational headers**: every response carries `X-Request-ID`; every answer to an authenticated request carries `X-RateLimit-*`; a 429 carries `Retry-After`.',
  '- **Idempotency**: write routes that document `Idempotency-Key` replay the first 2xx response for 24 hours (`Idempotency-Replayed: true`).',
  '- **Webhooks**: events are signed with HMAC-SHA256; see the `webhooks` tag.',
].join('\n');

/**
 * Builds the OpenAPI 3.1 document of the app's module graph in its canonical (sorted, committed) form:
 * the routes' Swagger metadata, the operational headers, the webhook events and the error envelopes, with
 * the capture options stated once ({@link referenceCaptureOptions}).
 * Served at `/docs/openapi.json` and written to `openapi/openapi.json` by `npm run openapi`, so the two
 * are identical. The app need not be initialised or listening (a `preview` app is enough).
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setOpenAPIVersion('3.1.0')
    .setTitle('Glimpse API')
    .setDescription(DESCRIPTION)
    .setVersion('1.0.0')
    .addServer('/', 'This server')
    .addBearerAuth(
      {
        type: 'http',
        scheme: 'bearer',
        bearerFormat: 'sk_live_…',
        description: 'API key `sk_live_…`, sent as `Authorization: Bearer <API_KEY>`',
      },
      'apiKey',
    )
    .build();
  const raw = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (_controller, method) => method,
    extraModels: Object.values(WEBHOOK_EVENT_SCHEMAS),
  });
  const usedTags = new Set(operationsOf(raw).flatMap((op) => op.tags ?? []));
  usedTags.add('webhooks');
  raw.tags = [...usedTags].map((name) => (TAG_DESCRIPTIONS[name] ? { name, description: TAG_DESCRIPTIONS[name] } : { name }));
  addOperationalHeaders(raw);
  addWebhooks(
    raw,
    Object.fromEntries(Object.entries(WEBHOOK_EVENT_SCHEMAS).map(([type, dto]) => [type, dto.name])),
    WEBHOOK_EVENT_EXAMPLES,
  );
  const doc = toOpenApi31Schemas(raw);
  referenceCaptureOptions(doc);
  return canonicalizeDocument(doc);
}
