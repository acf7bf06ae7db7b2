import { Inject, Injectable } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validate } from 'class-validator';
import { AccountsService } from '../accounts/accounts.service';
import { monthlyCap } from '../accounts/plan';
import { UserError, UsersService, UserView, UserWithLink } from '../accounts/users.service';
import { ApiKeysService, CreatedApiKey } from '../auth/api-keys.service';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { toFieldErrors } from '../common/validation';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { QuotaService, QuotaStatus } from '../quota/quota.service';
import { RunOverview, RunsService } from '../runs/runs.service';
import { utcMonthOf as quotaMonthOf } from '../common/utc-month';
import { WARNING_THRESHOLD_PERCENTS } from '../quota/quota-window';
import { ScreenshotJobDto } from '../screenshots/dto/screenshot-job.dto';
import { ScreenshotsService } from '../screenshots/screenshots.service';
import { CreateWebhookEndpointDto, UpdateWebhookEndpointDto } from '../webhooks/dto/create-webhook-endpoint.dto';
import { WebhookDeliveryDto } from '../webhooks/dto/webhook-delivery.dto';
import { CreatedWebhookEndpointDto, WebhookEndpointDto } from '../webhooks/dto/webhook-endpoint.dto';
import { WebhooksService } from '../webhooks/webhooks.service';
import { DashboardError, notFoundAsPage } from './dashboard-request';
import { DashboardSessionsService, SessionView, SignedIn } from './dashboard-sessions.service';

/** One API key row of the Overview and API keys pages. */
export interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  used: number;
  limit: number;
  remaining: number;
}

/** Usage of the account this month (Overview page). */
export interface UsageOverview {
  plan: string;
  /** Monthly cap per key. */
  limit: number;
  /** All keys together, revoked ones included: what the account ceiling counts. */
  used: number;
  /** The account's monthly ceiling, all keys together (CONTRACT.md "Quotas"). */
  ceiling: number;
  /** What is left under the ceiling (never below 0). */
  ceilingRemaining: number;
  resetAt: Date;
  keys: KeyRow[];
  /** Chart data: `days` labels (`YYYY-MM-DD`, 1st to today), one series of daily counts per key. */
  chart: { days: string[]; limit: number; thresholds: number[]; series: { keyId: string; label: string; daily: number[] }[] };
}

/** Result of a form action: either done (with what to show once) or the form's error message. */
/** A form action's outcome; a refusal may carry its status (default 400), e.g. 403 for a plan limit. */
export type FormResult<T> = { ok: true; value: T } | { ok: false; error: string; status?: number };

/** Overlaps offered when rotating a webhook secret, s: at once, 1 h, 24 h. */
export const ROTATION_OVERLAPS_S = [0, 3600, 86_400] as const;

/** Newest jobs on the Screenshots page. */
const RECENT_JOBS = 50;

/** Runs per page of the Runs page. */
export const RUNS_PAGE_SIZE = 25;

/** A run row or detail of the Runs pages: the run with the name of the key it counted against. */
export type RunRow = RunOverview & { keyLabel: string };

/**
 * Page data and actions of the dashboard (docs/dashboard.md). It only calls the services the REST API uses
 * (API keys, quotas, screenshots, webhooks, users), always scoped to the signed-in user's account:
 * another account's ids are {@link DashboardError.notFound}.
 */
@Injectable()
export class DashboardService {
  constructor(
    private readonly accounts: AccountsService,
    private readonly users: UsersService,
    private readonly apiKeys: ApiKeysService,
    private readonly quota: QuotaService,
    private readonly screenshots: ScreenshotsService,
    private readonly webhooks: WebhooksService,
    private readonly runs: RunsService,
    private readonly sessions: DashboardSessionsService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The account's active API keys (render keys and monitors are created for one of them), oldest first. */
  async activeApiKeys(user: UserView): Promise<{ id: string; name: string; prefix: string }[]> {
    const keys = await this.apiKeys.list(user.accountId);
    return keys.filter((k) => !k.revokedAt).map((k) => ({ id: k.id, name: k.name ?? '', prefix: k.prefix }));
  }

  /** The account's keys with this month's usage, oldest first (one usage query for all of them). */
  async keys(user: UserView): Promise<KeyRow[]> {
    const account = await this.accounts.get(user.accountId);
    const keys = await this.apiKeys.list(account.id);
    const usage = await this.quota.statusOfKeys(
      keys.map((k) => k.id),
      account.plan,
    );
    return keys.map((k) => {
      const { used, limit, remaining } = usage.get(k.id) as QuotaStatus;
      return {
        id: k.id,
        name: k.name ?? '',
        prefix: k.prefix,
        createdAt: k.createdAt,
        lastUsedAt: k.lastUsedAt,
        revokedAt: k.revokedAt,
        used,
        limit,
        remaining,
      };
    });
  }

  /** Overview: plan, cap per key, the account's usage against its ceiling, reset date and the per-day chart of this month. */
  async overview(user: UserView): Promise<UsageOverview> {
    const account = await this.accounts.get(user.accountId);
    const [keys, accountQuota] = await Promise.all([this.keys(user), this.quota.accountStatus(account.id, account.plan)]);
    const limit = monthlyCap(account.plan, this.config.legacyFreeCap);
    const daily = await this.quota.dailyUsageThisMonth(keys.map((k) => k.id));
    const now = this.clock.now();
    const { month, resetAt } = quotaMonthOf(now);
    const days: string[] = [];
    for (let d = new Date(`${month}T00:00:00Z`); d <= now; d = new Date(d.getTime() + 86_400_000)) days.push(d.toISOString().slice(0, 10));
    const shown = keys.filter((k) => !k.revokedAt || daily.some((u) => u.apiKeyId === k.id));
    const series = shown.map((k) => ({
      keyId: k.id,
      label: `${k.name || 'Unnamed key'} (${k.prefix}…)`,
      daily: days.map((day) => daily.find((u) => u.apiKeyId === k.id && u.day === day)?.used ?? 0),
    }));
    return {
      plan: account.plan,
      limit,
      used: accountQuota.used,
      ceiling: accountQuota.limit,
      ceilingRemaining: accountQuota.remaining,
      resetAt,
      keys,
      chart: { days, limit, thresholds: WARNING_THRESHOLD_PERCENTS.map((p) => Math.ceil((limit * p) / 100)), series },
    };
  }

  /** Creates a key; its secret is in the result only (shown once). */
  async createKey(user: UserView, name: string): Promise<FormResult<CreatedApiKey>> {
    const trimmed = name.trim();
    if (!trimmed) return { ok: false, error: 'Give the key a name, such as "production".' };
    if (trimmed.length > 100) return { ok: false, error: 'Use at most 100 characters for the name.' };
    return this.formAction(() => this.apiKeys.create(user.accountId, trimmed, { withinPlan: true }));
  }

  /** Revokes one of the account's keys at once. Throws 404 for another account's key. */
  async revokeKey(user: UserView, keyId: string): Promise<void> {
    if (!(await this.apiKeys.revokeOwn(user.accountId, keyId))) throw DashboardError.notFound();
  }

  /** The account's webhook endpoints. */
  async endpoints(user: UserView): Promise<WebhookEndpointDto[]> {
    return (await this.webhooks.list(user)).data;
  }

  /** One of the account's endpoints (404 otherwise). */
  async endpoint(user: UserView, id: string): Promise<WebhookEndpointDto> {
    const found = (await this.webhooks.list(user)).data.find((e) => e.id === id);
    if (!found) throw DashboardError.notFound();
    return found;
  }

  /** Creates an endpoint from the form (validated like `POST /v1/webhooks`); its secret is shown once. */
  async createEndpoint(user: UserView, form: Record<string, unknown>): Promise<FormResult<CreatedWebhookEndpointDto>> {
    const dto = plainToInstance(CreateWebhookEndpointDto, endpointFormBody(form));
    return validatedFormAction(dto, () => this.webhooks.create(user, dto));
  }

  /**
   * Edits one of the account's endpoints from the form (URL, events, description, signature scheme),
   * validated like `PATCH /v1/webhooks/{id}`; a person's mistake is the form's message. Throws 404 for
   * another account's endpoint.
   */
  async updateEndpoint(user: UserView, id: string, form: Record<string, unknown>): Promise<FormResult<WebhookEndpointDto>> {
    const dto = plainToInstance(UpdateWebhookEndpointDto, endpointFormBody(form));
    return validatedFormAction(dto, () => notFoundAsPage(() => this.webhooks.update(user, id, dto)));
  }

  /**
   * New signing secret of one of the account's endpoints (shown once); the old one keeps signing for
   * `overlapS` seconds (one of {@link ROTATION_OVERLAPS_S}, default 24 h as in Svix's portal).
   */
  async rotateEndpoint(user: UserView, id: string, overlap: unknown): Promise<{ secret: string; overlapS: number }> {
    const overlapS = ROTATION_OVERLAPS_S.find((s) => String(s) === String(overlap)) ?? 86_400;
    const rotated = await notFoundAsPage(() => this.webhooks.rotate(user, id, { expiresInSeconds: overlapS }));
    return { secret: rotated.secret, overlapS };
  }

  /** Enables or disables one of the account's endpoints (disabling ends its open deliveries). */
  async setEndpointEnabled(user: UserView, id: string, enabled: boolean): Promise<void> {
    await notFoundAsPage(() => this.webhooks.update(user, id, { enabled }));
  }

  /** Sends one of the endpoint's deliveries again now; a delivery in flight is the form's message. */
  async resendDelivery(user: UserView, id: string, deliveryId: string): Promise<FormResult<string>> {
    return this.formAction(async () => (await notFoundAsPage(() => this.webhooks.resendDelivery(user, id, deliveryId))).deliveryId);
  }

  /** Sends `test.ping` to one of the account's endpoints; returns the delivery id. */
  async testEndpoint(user: UserView, id: string): Promise<string> {
    return (await notFoundAsPage(() => this.webhooks.test(user, id))).deliveryId;
  }

  /** Deletes one of the account's endpoints. */
  async deleteEndpoint(user: UserView, id: string): Promise<void> {
    await notFoundAsPage(() => this.webhooks.remove(user, id));
  }

  /** The endpoint's newest 50 deliveries. */
  async deliveries(user: UserView, id: string): Promise<WebhookDeliveryDto[]> {
    return (await notFoundAsPage(() => this.webhooks.listDeliveries(user, id))).data;
  }

  /** The account's newest jobs, with the name of the key each counted against. */
  async jobs(user: UserView, keys: KeyRow[]): Promise<(ScreenshotJobDto & { targetUrl: string; keyLabel: string })[]> {
    const jobs = await this.screenshots.listRecent(user.accountId, RECENT_JOBS);
    return jobs.map((j) => ({ ...j, keyLabel: keyLabel(keys, j.apiKeyId) }));
  }

  /** One of the account's jobs (404 otherwise). */
  async job(user: UserView, id: string): Promise<ScreenshotJobDto> {
    return notFoundAsPage(() => this.screenshots.get(user, id));
  }

  /**
   * A page of the account's browser session runs, newest first ({@link RUNS_PAGE_SIZE} per page),
   * from `cursor` (a `nextCursor` of the previous page), each with its key's name. Throws 400
   * `VALIDATION_FAILED` for a cursor the Runs page did not issue.
   */
  async runPage(user: UserView, keys: KeyRow[], cursor: string | undefined): Promise<{ runs: RunRow[]; nextCursor: string | null }> {
    const page = await this.runs.listOverviews(user, { limit: RUNS_PAGE_SIZE, cursor: cursor || undefined });
    return { runs: page.data.map((run) => ({ ...run, keyLabel: keyLabel(keys, run.apiKeyId) })), nextCursor: page.nextCursor };
  }

  /** One of the account's runs with its steps, errors and video (404 otherwise). */
  async run(user: UserView, keys: KeyRow[], id: string): Promise<RunRow> {
    const run = await notFoundAsPage(() => this.runs.getOverview(user, id));
    return { ...run, keyLabel: keyLabel(keys, run.apiKeyId) };
  }

  /**
   * Cancels one of the account's runs like `POST /v1/runs/{id}/cancel`: a pending run ends at once, a
   * running one stops at its current step. A run that already ended is the page's message (409
   * `RUN_ALREADY_ENDED` in the API); another account's run is 404.
   */
  async cancelRun(user: UserView, id: string): Promise<FormResult<void>> {
    const result = await this.formAction(() => notFoundAsPage(() => this.runs.cancel(user, id)));
    return result.ok ? { ok: true, value: undefined } : result;
  }

  /** Members of the user's account and the user's sessions (Account page). */
  async account(signedIn: SignedIn): Promise<{ members: UserView[]; sessions: SessionView[]; plan: string; accountEmail: string }> {
    const account = await this.accounts.get(signedIn.user.accountId);
    return {
      members: await this.users.listMembers(signedIn.user.accountId),
      sessions: await this.sessions.list(signedIn.user.id, signedIn.sessionId),
      plan: account.plan,
      accountEmail: account.email,
    };
  }

  /** An owner invites a member: the one-time link to hand over. */
  async invite(user: UserView, email: string): Promise<FormResult<UserWithLink>> {
    return this.formAction(() => this.users.invite(user, email));
  }

  /** An owner removes a member (404 when not in the account). */
  async removeMember(user: UserView, userId: string): Promise<FormResult<void>> {
    const result = await this.formAction(() => this.users.removeMember(user, userId));
    if (result.ok && !result.value) throw DashboardError.notFound();
    return result.ok ? { ok: true, value: undefined } : result;
  }

  /**
   * Changes the user's password after checking the current one, and ends the user's other sessions
   * (CONTRACT.md, "Dashboard"); the session that changed it stays.
   */
  async changePassword(signedIn: SignedIn, form: Record<string, unknown>): Promise<FormResult<void>> {
    if (String(form.newPassword ?? '') !== String(form.confirmPassword ?? ''))
      return { ok: false, error: 'The new passwords do not match.' };
    const result = await this.formAction(() =>
      this.users.changePassword(signedIn.user.id, String(form.currentPassword ?? ''), String(form.newPassword ?? '')),
    );
    if (result.ok) await this.sessions.endAllOf(signedIn.user.id, signedIn.sessionId);
    return result;
  }

  /** Ends one of the user's sessions (404 otherwise). */
  async endSession(user: UserView, sessionId: string): Promise<void> {
    if (!(await this.sessions.revoke(user.id, sessionId))) throw DashboardError.notFound();
  }

  private formAction<T>(action: () => Promise<T>): Promise<FormResult<T>> {
    return formAction(action);
  }
}

/** Runs a form action; a person's mistake (a 4xx ApiError or a UserError) becomes the form's message. */
export async function formAction<T>(action: () => Promise<T>): Promise<FormResult<T>> {
  try {
    return { ok: true, value: await action() };
  } catch (err) {
    if (err instanceof UserError) return { ok: false, error: err.message };
    if (err instanceof ApiError && err.status >= 400 && err.status < 500 && err.status !== 404)
      return { ok: false, error: err.message, status: err.status };
    throw err;
  }
}

/**
 * Validates a form's DTO as the matching API route does ({@link formProblems}: 400 with the problems as
 * the form's message), then runs `action` as {@link formAction}.
 */
export async function validatedFormAction<T>(dto: object, action: () => Promise<T>): Promise<FormResult<T>> {
  const invalid = await formProblems(dto);
  if (invalid) return { ok: false, error: invalid };
  return formAction(action);
}

/** How a page names the key a job or run counted against: its name, else its prefix. */
function keyLabel(keys: KeyRow[], apiKeyId: string): string {
  const key = keys.find((k) => k.id === apiKeyId);
  return key ? key.name || `${key.prefix}…` : '';
}

/**
 * Validates a form's DTO as the matching API route does; returns the problems as one line for the
 * form's message (`field: message; …`), or null when it is valid.
 */
export async function formProblems(dto: object): Promise<string | null> {
  const errors = await validate(dto, { whitelist: true, forbidNonWhitelisted: true });
  if (!errors.length) return null;
  return toFieldErrors(errors)
    .map((f) => `${f.field}: ${f.message}`)
    .join('; ');
}

/**
 * The endpoint form's fields as `POST /v1/webhooks` and `PATCH /v1/webhooks/{id}` take them: text trimmed,
 * every event (`*`) when `*` or none is ticked, the signature scheme only when one is chosen.
 */
function endpointFormBody(form: Record<string, unknown>): Record<string, unknown> {
  const events = ([] as unknown[]).concat(form.events ?? []).map(String);
  return {
    url: String(form.url ?? '').trim(),
    events: events.includes('*') || !events.length ? ['*'] : events,
    description: String(form.description ?? '').trim(),
    signatureScheme: form.signatureScheme || undefined,
  };
}
