import type { MigrationInterface } from 'typeorm';
import { Initial1795217803145 } from './1795217803145-Initial';
import { Quotas1795218034281 } from './1795218034281-Quotas';
import { Webhooks1795218228183 } from './1795218228183-Webhooks';
import { IdempotencyKeys1795218527614 } from './1795218527614-IdempotencyKeys';
import { CaptureEngine1795218600000 } from './1795218600000-CaptureEngine';
import { CaptureOptions1795218700000 } from './1795218700000-CaptureOptions';
import { Dashboard1795437416774 } from './1795437416774-Dashboard';
import { WebhookManagement1795437571935 } from './1795437571935-WebhookManagement';
import { Runs1795437856201 } from './1795437856201-Runs';
import { PendingJobsIndex1795438718378 } from './1795438718378-PendingJobsIndex';
import { CaptureOptionsEcho1795441843117 } from './1795441843117-CaptureOptionsEcho';
import { DurabilityIndexes1795442000000 } from './1795442000000-DurabilityIndexes';
import { ResultExpiry1795500000000 } from './1795500000000-ResultExpiry';
import { SignInFailuresByIp1795510000000 } from './1795510000000-SignInFailuresByIp';
import { OpenWorkCounter1795520000000 } from './1795520000000-OpenWorkCounter';
import { RateLimits1795530000000 } from './1795530000000-RateLimits';
import { TargetStatus1795540000000 } from './1795540000000-TargetStatus';
import { RenderKeys1795600000000 } from './1795600000000-RenderKeys';
import { ExtractedContent1795640000000 } from './1795640000000-ExtractedContent';
import { Monitors1795700000000 } from './1795700000000-Monitors';
import { StorageDestinations1795710000000 } from './1795710000000-StorageDestinations';
import { RenderFlightsCreatedAt1795720000000 } from './1795720000000-RenderFlightsCreatedAt';
import { Thumbnails1795730000000 } from './1795730000000-Thumbnails';
import { RenderKeysApiKey1795740000000 } from './1795740000000-RenderKeysApiKey';
import { AccountQuota1795745000000 } from './1795745000000-AccountQuota';
import { FairShare1795755000000 } from './1795755000000-FairShare';
import { Crawls1795800498402 } from './1795800498402-Crawls';
import { RunTurns1795765000000 } from './1795765000000-RunTurns';
import { JobArtifacts1795800496486 } from './1795800496486-JobArtifacts';
import { Profiles1795801194741 } from './1795801194741-Profiles';

/** Committed migrations, in order. Add each generated migration here (`npm run migration:generate -- src/database/migrations/Name`). */
export const MIGRATIONS: Array<new () => MigrationInterface> = [
  Initial1795217803145,
  Quotas1795218034281,
  Webhooks1795218228183,
  IdempotencyKeys1795218527614,
  CaptureEngine1795218600000,
  CaptureOptions1795218700000,
  Dashboard1795437416774,
  WebhookManagement1795437571935,
  Runs1795437856201,
  PendingJobsIndex1795438718378,
  CaptureOptionsEcho1795441843117,
  DurabilityIndexes1795442000000,
  ResultExpiry1795500000000,
  SignInFailuresByIp1795510000000,
  OpenWorkCounter1795520000000,
  RateLimits1795530000000,
  TargetStatus1795540000000,
  RenderKeys1795600000000,
  ExtractedContent1795640000000,
  Monitors1795700000000,
  StorageDestinations1795710000000,
  RenderFlightsCreatedAt1795720000000,
  Thumbnails1795730000000,
  RenderKeysApiKey1795740000000,
  AccountQuota1795745000000,
  FairShare1795755000000,
  RunTurns1795765000000,
  JobArtifacts1795800496486,
  Crawls1795800498402,
  Profiles1795801194741,
];
