import { Inject, Injectable } from '@nestjs/common';
import { requireAccountOwned } from '../accounts/find-account-owned';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { assertBelowPlanLimit } from '../accounts/plan-limits';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { ApiKeysService } from '../auth/api-keys.service';
import { CAPTURE_LIMITS, captureOptionConflicts, CaptureOptionsInput, givenCaptureOptions } from '../capture/capture-options';
import { ApiError, FieldError } from '../common/api-error';
import { newestFirstPage } from '../common/cursor';
import { publicColumns } from '../common/public-columns';
import { ProfilesService } from '../profiles/profiles.service';
import { Clock } from '../common/clock';
import { CursorPageQueryDto } from '../common/cursor-page-query.dto';
import { newId } from '../common/ids';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { SsrfGuard } from '../egress/ssrf-guard';
import {
  CheckStartedDto,
  CreateMonitorDto,
  DiffInput,
  MONITOR_OPTION_NAMES,
  MonitorCheckDto,
  MonitorCheckListDto,
  MonitorDto,
  MonitorListDto,
  PinBaselineDto,
  UpdateMonitorDto,
} from './dto/monitor.dto';
import { captureInput, MonitorChecksService } from './monitor-checks.service';
import { MonitorCheck } from './monitor-check.entity';
import { checkSchedule, nextCheckAt } from './monitor-schedule';
import { Monitor, MonitorDiffSettings } from './monitor.entity';

/** Counts the account's monitors for {@link assertBelowPlanLimit}. */
const MONITORS_SQL = `SELECT count(*)::int AS n FROM monitors WHERE account_id = $1`;

/** Comparison defaults (CONTRACT.md, "Monitors"). */
const DIFF_DEFAULTS: MonitorDiffSettings = { threshold: 0.1, minChangeRatio: 0.001, ignoreSelectors: [], ignoreRegions: [] };

/** The capture formats a monitor can compare. */
const COMPARABLE_FORMATS = ['png', 'jpeg', 'webp'];

/** The fields of a monitor's body that are not capture options (PATCH refuses them as null). */
const MONITOR_OWN_FIELDS = ['url', 'schedule', 'diff', 'enabled', 'description'] as const;

/**
 * Monitors (CONTRACT.md, "Monitors"): create (plan-limited per account, "Organizations and plan
 * limits"), list, read, change, delete, check now and pin a baseline. A monitor belongs to the API key
 * that created it; every account's monitors are visible to its other keys, another account's are 404.
 */
@Injectable()
export class MonitorsService {
  constructor(
    @InjectRepository(Monitor) private readonly monitors: Repository<Monitor>,
    @InjectRepository(MonitorCheck) private readonly checks: Repository<MonitorCheck>,
    private readonly checksService: MonitorChecksService,
    private readonly apiKeys: ApiKeysService,
    private readonly ssrfGuard: SsrfGuard,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly profiles: ProfilesService,
  ) {}

  /**
   * Creates a monitor for `caller`'s API key, its first check due now (unless created paused). Throws
   * 400 `VALIDATION_FAILED` (options, schedule, diff), 400 `TARGET_NOT_ALLOWED`, 404 `NOT_FOUND` and 400
   * `PROFILE_DOMAIN_NOT_ALLOWED` for a `profile` ({@link ProfilesService.assertUsable}), 403
   * `PLAN_LIMIT_REACHED` (`details: { resource: "monitors", limit, plan }`).
   */
  async create(caller: AuthenticatedKey, dto: CreateMonitorDto): Promise<MonitorDto> {
    const now = this.clock.now();
    const { options, schedule, diff } = this.validated(dto, null, now);
    await this.ssrfGuard.assertAllowed(dto.url);
    await this.profiles.assertUsable(caller.accountId, [{ profile: options.profile, url: dto.url, prefix: '' }]);
    const enabled = dto.enabled ?? true;
    return this.monitors.manager.transaction(async (manager) => {
      await assertBelowPlanLimit(manager, caller.accountId, 'monitors', MONITORS_SQL);
      const monitor = manager.create(Monitor, {
        id: newId('monitor'),
        accountId: caller.accountId,
        apiKeyId: caller.apiKeyId,
        url: dto.url,
        options,
        schedule,
        diff,
        enabled,
        pausedReason: enabled ? null : 'manual',
        description: dto.description ?? '',
        baselineCheckId: null,
        createdAt: now,
        updatedAt: now,
        lastCheckAt: null,
        nextCheckAt: enabled ? now : null,
        consecutiveFailures: 0,
        lastChange: null,
      });
      await manager.insert(Monitor, monitor);
      return this.toDto(monitor);
    });
  }

  /** The account's monitors, newest first, a page at a time. Throws 400 `VALIDATION_FAILED` for a cursor not issued here. */
  async list(caller: Pick<AuthenticatedKey, 'accountId'>, query: CursorPageQueryDto): Promise<MonitorListDto> {
    const qb = this.monitors.createQueryBuilder('m').where('m.account_id = :accountId', { accountId: caller.accountId });
    const { rows, nextCursor } = await newestFirstPage(qb, query, 'monitor');
    return { data: rows.map((m) => this.toDto(m)), nextCursor };
  }

  /** The caller's monitor. Throws 404 `NOT_FOUND` for a malformed id, an unknown one or another account's. */
  async get(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<MonitorDto> {
    return this.toDto(await this.findOwn(caller, id));
  }

  /**
   * Changes the fields given (capture options given replace the monitor's one by one; `diff` fields
   * likewise; `schedule` whole). `enabled: false` pauses (`manual`), `true` resumes: failures cleared,
   * next check due now. A new schedule moves the next check to its next slot. Throws as {@link create}
   * and 404 `NOT_FOUND`.
   */
  async update(caller: Pick<AuthenticatedKey, 'accountId'>, id: string, dto: UpdateMonitorDto): Promise<MonitorDto> {
    const monitor = await this.findOwn(caller, id);
    // Absent keeps a field's value; null is no value these fields can have (as for PATCH /v1/webhooks/{id}).
    const nulls = MONITOR_OWN_FIELDS.filter((field) => dto[field] === null);
    if (nulls.length)
      throw ApiError.validation(nulls.map((field) => ({ field, message: 'must not be null (leave it out to keep its value)' })));
    const now = this.clock.now();
    const { options, schedule, diff } = this.validated(dto, monitor, now);
    if (dto.url !== undefined) await this.ssrfGuard.assertAllowed(dto.url);
    await this.profiles.assertUsable(caller.accountId, [{ profile: options.profile, url: dto.url ?? monitor.url, prefix: '' }]);
    const changes: Partial<Monitor> = { options, schedule, diff, updatedAt: now };
    if (dto.url !== undefined) changes.url = dto.url;
    if (dto.description !== undefined) changes.description = dto.description;
    if (dto.enabled === false) Object.assign(changes, { enabled: false, pausedReason: 'manual', nextCheckAt: null });
    else if (dto.enabled === true && !monitor.enabled) {
      Object.assign(changes, { enabled: true, pausedReason: null, consecutiveFailures: 0, nextCheckAt: now });
    } else if (dto.schedule !== undefined && monitor.enabled) changes.nextCheckAt = nextCheckAt(schedule, now);
    await this.monitors.update({ id: monitor.id }, changes);
    return this.toDto({ ...monitor, ...changes });
  }

  /** Deletes the monitor and its checks. Throws 404 `NOT_FOUND`. */
  async remove(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<void> {
    const monitor = await this.findOwn(caller, id);
    await this.monitors.delete({ id: monitor.id });
  }

  /**
   * Starts a check now, outside the schedule (the schedule is unchanged), counted against the
   * monitor's API key; a paused monitor can be checked too. Throws 404 `NOT_FOUND`, 400
   * `VALIDATION_FAILED` when the monitor's API key was revoked, 429 `PLAN_QUOTA_EXCEEDED` /
   * `TOO_MANY_PENDING_JOBS` with nothing created.
   */
  async checkNow(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<CheckStartedDto> {
    const monitor = await this.findOwn(caller, id);
    const owner = await this.apiKeys.callerFor(monitor.accountId, monitor.apiKeyId);
    if (!owner) {
      throw ApiError.validation([
        { field: 'id', message: "the monitor's API key was revoked; create the monitor again with an active key" },
      ]);
    }
    const { check, afterCommit } = await this.monitors.manager.transaction(async (manager) => {
      const [locked]: { id: string }[] = await manager.query(`SELECT id FROM monitors WHERE id = $1 FOR UPDATE`, [monitor.id]);
      if (!locked) throw ApiError.notFound('Monitor');
      return this.checksService.start(manager, monitor, owner, 'throw');
    });
    await afterCommit();
    return { checkId: check.id };
  }

  /**
   * Pins the image of the monitor's successful check `checkId` as its baseline (`baseline: "pinned"`).
   * Throws 404 `NOT_FOUND` (monitor), 400 `VALIDATION_FAILED` naming `checkId` when it is not a check
   * of this monitor with an image.
   */
  async pinBaseline(caller: Pick<AuthenticatedKey, 'accountId'>, id: string, dto: PinBaselineDto): Promise<MonitorDto> {
    const monitor = await this.findOwn(caller, id);
    const check = await this.checks.findOneBy({ id: dto.checkId, monitorId: monitor.id });
    if (!check || !check.screenshotFile || !['baseline', 'unchanged', 'changed'].includes(check.status)) {
      throw ApiError.validation([{ field: 'checkId', message: 'must be a successful check of this monitor' }]);
    }
    const changes = { baselineCheckId: check.id, updatedAt: this.clock.now() };
    await this.monitors.update({ id: monitor.id }, changes);
    return this.toDto({ ...monitor, ...changes });
  }

  /** The monitor's checks, newest first, a page at a time. Throws 404 `NOT_FOUND`, 400 for a foreign cursor. */
  async listChecks(caller: Pick<AuthenticatedKey, 'accountId'>, id: string, query: CursorPageQueryDto): Promise<MonitorCheckListDto> {
    const monitor = await this.findOwn(caller, id);
    const qb = this.checks.createQueryBuilder('c').where('c.monitor_id = :monitorId', { monitorId: monitor.id });
    const { rows, nextCursor } = await newestFirstPage(qb, query, 'monitorCheck');
    return { data: rows.map((c) => this.checkDto(c)), nextCursor };
  }

  /**
   * The account's changes (checks `changed`), newest first, at most `limit`, optionally of one
   * monitor and since a time: the MCP tool `list_monitor_changes`. Throws 404 for another account's monitor.
   */
  async listChanges(
    caller: Pick<AuthenticatedKey, 'accountId'>,
    filter: { monitorId?: string; since?: Date; limit: number },
  ): Promise<(MonitorCheckDto & { url: string })[]> {
    if (filter.monitorId !== undefined) await this.findOwn(caller, filter.monitorId);
    const qb = this.checks
      .createQueryBuilder('c')
      .innerJoinAndSelect('c.monitor', 'm')
      .where(`c.account_id = :accountId AND c.status = 'changed'`, { accountId: caller.accountId })
      .orderBy('c.created_at', 'DESC')
      .addOrderBy('c.id', 'DESC')
      .limit(filter.limit);
    if (filter.monitorId) qb.andWhere('c.monitor_id = :monitorId', { monitorId: filter.monitorId });
    if (filter.since) qb.andWhere('c.created_at >= :since', { since: filter.since });
    const rows = await qb.getMany();
    return rows.map((c) => ({ ...this.checkDto(c), url: c.monitor?.url ?? '' }));
  }

  /** Maps a monitor to its public shape. */
  toDto(m: Monitor): MonitorDto {
    return {
      ...publicColumns(m, ['id', 'url', 'options', 'schedule', 'diff', 'enabled', 'pausedReason', 'description', 'apiKeyId']),
      baseline: m.baselineCheckId ? 'pinned' : 'previous',
      ...publicColumns(m, ['baselineCheckId', 'createdAt', 'updatedAt', 'lastCheckAt', 'nextCheckAt', 'consecutiveFailures', 'lastChange']),
    };
  }

  /** Maps a check to its public shape. */
  checkDto(c: MonitorCheck): MonitorCheckDto {
    return {
      ...publicColumns(c, ['id', 'monitorId', 'jobId', 'status', 'diffRatio', 'diffPixels', 'regions']),
      screenshotUrl: this.checksService.urlOf(c.screenshotFile),
      baselineUrl: this.checksService.urlOf(c.baselineFile),
      diffUrl: this.checksService.urlOf(c.diffFile),
      ...publicColumns(c, ['error', 'createdAt', 'completedAt']),
    };
  }

  /**
   * The options, schedule and diff settings after applying `dto` to `current` (null: a new monitor),
   * validated together; throws 400 `VALIDATION_FAILED` listing every problem.
   */
  private validated(dto: UpdateMonitorDto, current: Monitor | null, now: Date): Pick<Monitor, 'options' | 'schedule' | 'diff'> {
    const given = givenCaptureOptions(dto as CaptureOptionsInput) as Record<string, unknown>;
    const own = Object.fromEntries(Object.entries(given).filter(([name]) => (MONITOR_OPTION_NAMES as string[]).includes(name)));
    const merged = { ...(current?.options ?? {}), ...own } as Record<string, unknown>;
    // A capture option given as null is removed from the monitor (absent keeps it): how a PATCH drops a `profile`.
    for (const name of MONITOR_OPTION_NAMES) if ((dto as Record<string, unknown>)[name] === null) delete merged[name];
    const options = merged as CaptureOptionsInput;
    const errors: FieldError[] = [];
    if (options.format !== undefined && !COMPARABLE_FORMATS.includes(options.format)) {
      errors.push({ field: 'format', message: `must be one of ${COMPARABLE_FORMATS.join(', ')} for a monitor` });
    }
    errors.push(...captureOptionConflicts(options, this.config));
    const diff = { ...(current?.diff ?? DIFF_DEFAULTS), ...definedOf(dto.diff ?? {}) } as MonitorDiffSettings;
    const masks = new Set([...(options.mask ?? []), ...diff.ignoreSelectors]).size;
    if (masks > CAPTURE_LIMITS.maskMax) {
      errors.push({ field: 'diff.ignoreSelectors', message: `with mask makes more than ${CAPTURE_LIMITS.maskMax} selectors` });
    }
    let schedule = current?.schedule ?? null;
    if (dto.schedule !== undefined || !current) {
      const checked = checkSchedule(dto.schedule as NonNullable<UpdateMonitorDto['schedule']>, this.config.monitors.minIntervalS, now);
      errors.push(...checked.errors);
      schedule = checked.schedule;
    }
    if (errors.length || !schedule) throw ApiError.validation(errors);
    // The mask the checks will use must pass the options' own rules too.
    errors.push(...captureOptionConflicts(captureInput({ options, diff }), this.config));
    if (errors.length) throw ApiError.validation(errors);
    return { options, schedule, diff };
  }

  private findOwn(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<Monitor> {
    return requireAccountOwned(this.monitors, 'monitor', id, caller.accountId, 'Monitor');
  }
}

/** `diff` fields that were given. */
function definedOf(diff: DiffInput): Partial<MonitorDiffSettings> {
  return Object.fromEntries(Object.entries(diff).filter(([, v]) => v !== undefined)) as Partial<MonitorDiffSettings>;
}
