/**
 * Names for the shapes of the OpenAPI document (`openapi/openapi.json`), taken from the generated
 * `./generated/schema` so that they change when the API does. Nothing here is written by hand.
 */
import type { components, operations, webhooks } from './generated/schema';

type Schemas = components['schemas'];

/** A screenshot job (`ScreenshotJobDto`): `id`, `status` (`pending` → `processing` → `done` | `failed`), result `url` once `done`, … */
export type ScreenshotJob = Schemas['ScreenshotJobDto'];
/**
 * Every capture option (`CaptureOptions`: the session options and the others), the one type of them that
 * the bodies below share: a screenshot, a batch item, the upload form, a monitor, a job's `options`.
 */
export type CaptureOptions = Schemas['CaptureOptions'];
/** The session options (`SessionOptions`): the capture options a run takes too (viewport, device, headers, cookies, blocking, …). */
export type SessionOptions = Schemas['SessionOptions'];
/** Body of `POST /v1/screenshot`: `url` and every capture option (`CreateScreenshotDto`). */
export type CreateScreenshotRequest = Schemas['CreateScreenshotDto'];
/** Form of `POST /v1/screenshot/upload`: the HTML `file` and the capture options (`UploadScreenshotFormDto`). */
export type UploadScreenshotForm = Schemas['UploadScreenshotFormDto'];
/** A browser session run (`RunDto`). */
export type Run = Schemas['RunDto'];
/** Body of `POST /v1/runs`: `url`, `steps` (discriminated on `action`), `video`, `timeoutMs` and the session options (`CreateRunDto`). */
export type CreateRunRequest = Schemas['CreateRunDto'];
/** One step of a run (`steps[]` of {@link CreateRunRequest}). */
export type RunStep = NonNullable<CreateRunRequest['steps']>[number];
/** Query of `GET /v1/runs` without the `cursor`: `limit` (1–100, the page size) and `status`. */
export type ListRunsParams = Omit<NonNullable<operations['listRuns']['parameters']['query']>, 'cursor'>;
/** One page of `GET /v1/runs` (`RunListDto`): `data` and `nextCursor` (null on the last page). */
export type RunPage = Schemas['RunListDto'];
/** A crawl (`CrawlDto`), the body that starts one, its list and its pages (docs/crawls.md). */
export type Crawl = Schemas['CrawlDto'];
export type CreateCrawlRequest = Schemas['CreateCrawlDto'];
export type CrawlListPage = Schemas['CrawlListDto'];
/** Query of `GET /v1/crawls` without the `cursor`: `limit` (1–100) and `status`. */
export type ListCrawlsParams = Omit<NonNullable<operations['listCrawls']['parameters']['query']>, 'cursor'>;
/** One page of a crawl (`CrawlPageDto`): `url`, `depth`, `jobId`, `status`, `resultUrl`, `title`. */
export type CrawlPage = Schemas['CrawlPageDto'];
export type CrawlPageList = Schemas['CrawlPageListDto'];
/** A webhook endpoint as listed (`WebhookEndpointDto`, without its secret). */
export type WebhookEndpoint = Schemas['WebhookEndpointDto'];
/** A webhook endpoint just created, with its signing `secret` (`whsec_…`), shown this once. */
export type CreatedWebhookEndpoint = Schemas['CreatedWebhookEndpointDto'];
/** A render key (never its secret) and the answers that carry the secret once. */
export type RenderKey = Schemas['RenderKeyDto'];
export type CreatedRenderKey = Schemas['CreatedRenderKeyDto'];
export type CreateRenderKeyRequest = NonNullable<Schemas['CreateRenderKeyDto']>;
export type RotatedRenderKey = Schemas['RotatedRenderKeyDto'];
export type RotateRenderKeyRequest = NonNullable<Schemas['RotateRenderKeyDto']>;
/** A monitor (`MonitorDto`), the bodies that create and change one, and the pages of monitors and checks. */
export type Monitor = Schemas['MonitorDto'];
export type CreateMonitorRequest = Schemas['CreateMonitorDto'];
export type UpdateMonitorRequest = Schemas['UpdateMonitorDto'];
export type MonitorPage = Schemas['MonitorListDto'];
/** One check of a monitor (`MonitorCheckDto`): `status` `baseline` | `unchanged` | `changed` | `failed`, `diffRatio`, `regions`, `diffUrl`, … */
export type MonitorCheck = Schemas['MonitorCheckDto'];
export type MonitorCheckPage = Schemas['MonitorCheckListDto'];
/** A storage destination (`StorageDestinationDto`, never its credentials), its creation body and the answer of its test. */
export type StorageDestination = Schemas['StorageDestinationDto'];
export type CreateStorageDestinationRequest = Schemas['CreateStorageDestinationDto'];
export type StorageDestinationTest = Schemas['StorageDestinationTestDto'];
/** A browser profile (`ProfileDto`, never its state), the bodies that create and change one, and a page of profiles. */
export type Profile = Schemas['ProfileDto'];
export type CreateProfileRequest = Schemas['CreateProfileDto'];
export type UpdateProfileRequest = Schemas['UpdateProfileDto'];
export type ProfilePage = Schemas['ProfileListDto'];
/** Body of `POST /v1/webhooks`. */
export type CreateWebhookEndpointRequest = Schemas['CreateWebhookEndpointDto'];
/** Body of `PATCH /v1/webhooks/{id}`. */
export type UpdateWebhookEndpointRequest = Schemas['UpdateWebhookEndpointDto'];
/** Body of `POST /v1/webhooks/{id}/rotate` (optional overlap of the old secret). */
export type RotateWebhookSecretRequest = NonNullable<Schemas['RotateWebhookSecretDto']>;
/** Answer of `POST /v1/webhooks/{id}/rotate`: the new `secret`. */
export type RotatedWebhookSecret = Schemas['RotatedWebhookSecretDto'];
/** One delivery of an endpoint (`WebhookDeliveryDto`). */
export type WebhookDelivery = Schemas['WebhookDeliveryDto'];
/** The error envelope `{ error, code, requestId, details? }` of every error response (README "Errors"). */
export type ErrorEnvelope = Schemas['ErrorEnvelopeDto'];

/** The body of each event the document's `webhooks` section lists, by event type. */
export type WebhookEventMap = {
  [K in keyof webhooks]: webhooks[K]['post'] extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;
};
/** Event types the document lists (`screenshot.completed`, `run.failed`, `test.ping`, …). */
export type WebhookEventType = keyof WebhookEventMap;
/**
 * A webhook event body `{ id, type, createdAt, data }`, discriminated by `type`. Types not listed may
 * arrive as the service grows: ignore them (spec section 6.2).
 */
export type WebhookEvent = WebhookEventMap[WebhookEventType];
