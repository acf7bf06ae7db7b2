import { Initial1795217803145 } from './1795217803145-Initial';
import { Quotas1795218034281 } from './1795218034281-Quotas';
import { Webhooks1795218228183 } from './1795218228183-Webhooks';
import { IdempotencyKeys1795218527614 } from './1795218527614-IdempotencyKeys';
import { CaptureEngine1795218600000 } from './1795218600000-CaptureEngine';
import { CaptureOptions1795218700000 } from './1795218700000-CaptureOptions';
import { DurabilityIndexes1795219100000 } from './1795219100000-DurabilityIndexes';

/** Committed migrations, in order. Add each generated migration here (`npm run migration:generate -- src/database/migrations/Name`). */
export const MIGRATIONS: Function[] = [
  Initial1795217803145,
  Quotas1795218034281,
  Webhooks1795218228183,
  IdempotencyKeys1795218527614,
  CaptureEngine1795218600000,
  CaptureOptions1795218700000,
  DurabilityIndexes1795219100000,
];
