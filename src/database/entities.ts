import { RenderKey } from '../render/render-key.entity';
import { Monitor } from '../monitors/monitor.entity';
import { MonitorCheck } from '../monitors/monitor-check.entity';
import { Account } from '../accounts/account.entity';
import { Crawl, CrawlPage } from '../crawls/crawl.entity';
import { Profile } from '../profiles/profile.entity';
import { PasswordLink } from '../accounts/password-link.entity';
import { User } from '../accounts/user.entity';
import { ApiKey } from '../auth/api-key.entity';
import { DashboardSession } from '../dashboard/dashboard-session.entity';
import { SignInFailure } from '../dashboard/sign-in-failure.entity';
import { EventRecord } from '../events/event.entity';
import { IdempotencyRecord } from '../idempotency/idempotency-record.entity';
import { QuotaUsage } from '../quota/quota-usage.entity';
import { QuotaUsageDaily } from '../quota/quota-usage-daily.entity';
import { QuotaWarning } from '../quota/quota-warning.entity';
import { Run } from '../runs/run.entity';
import { ScreenshotJob } from '../screenshots/screenshot-job.entity';
import { ScreenshotUpload } from '../screenshots/screenshot-upload.entity';
import { StorageDestination } from '../storage-destinations/storage-destination.entity';
import { WebhookDelivery } from '../webhooks/webhook-delivery.entity';
import { WebhookEndpoint } from '../webhooks/webhook-endpoint.entity';

/** Every TypeORM entity of the service; the data source and the migration check use this list. */
export const ENTITIES = [
  Account,
  ApiKey,
  ScreenshotJob,
  ScreenshotUpload,
  EventRecord,
  QuotaUsage,
  QuotaWarning,
  IdempotencyRecord,
  WebhookEndpoint,
  WebhookDelivery,
  QuotaUsageDaily,
  User,
  PasswordLink,
  DashboardSession,
  SignInFailure,
  Run,
  RenderKey,
  Monitor,
  MonitorCheck,
  StorageDestination,
  Crawl,
  CrawlPage,
  Profile,
];
