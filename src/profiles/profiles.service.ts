import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, IsNull, Repository } from 'typeorm';
import { findAccountOwned, requireAccountOwned } from '../accounts/find-account-owned';
import { assertBelowPlanLimit } from '../accounts/plan-limits';
import { ApiError, ErrorCode } from '../common/api-error';
import { Clock } from '../common/clock';
import { newestFirstPage } from '../common/cursor';
import type { CursorPageQueryDto } from '../common/cursor-page-query.dto';
import { hostAllowed } from '../common/host-patterns';
import { newId } from '../common/ids';
import { SecretCipher } from '../common/secret-cipher';
import { EventsService } from '../events/events.service';
import { resealColumns, ResealReport } from '../sql/secret-reseal';
import { CreateProfileDto, ProfileDto, ProfileListDto, SaveProfileInput, UpdateProfileDto } from './dto/profile.dto';
import { Profile } from './profile.entity';
import { filterStorageState, STORAGE_STATE_MAX_BYTES, StorageState, StorageStateInput, storageStateBytes } from './storage-state';
import { publicColumns } from '../common/public-columns';

/** Counts the account's profiles for {@link assertBelowPlanLimit}. */
const PROFILES_SQL = `SELECT count(*)::int AS n FROM profiles WHERE account_id = $1`;

/** An account's caller, as far as profiles care. */
type Caller = { accountId: string };

/** One use of a profile to check at submission: the option as given, the target URL, the field prefix (`items[2].`). */
export interface ProfileUse {
  profile?: string | null;
  url: string;
  prefix: string;
}

/**
 * A profile could not take a state (the run's `saveProfile`): it was deleted, the plan's limit is
 * reached, or the state is over 1 MiB. The message is customer-safe.
 */
export class ProfileSaveError extends Error {}

/**
 * Browser profiles (CONTRACT.md, "Browser profiles (logged-in captures)"): saved browser states
 * (cookies and local storage) bound to `allowedDomains`, filtered to them when saved and when used,
 * sealed at rest with {@link SecretCipher} (bound to the profile's id; `webhook:reseal` moves them to
 * the first key), never returned, logged, queued or sent in an event. At most the plan's number per
 * account (CONTRACT.md, "Organizations and plan limits": 2 / 10 / 50).
 */
@Injectable()
export class ProfilesService {
  constructor(
    @InjectRepository(Profile) private readonly profiles: Repository<Profile>,
    private readonly cipher: SecretCipher,
    private readonly clock: Clock,
    private readonly events: EventsService,
  ) {}

  /** Re-seals every profile's state under the first configured key ({@link resealColumns}; `webhook:reseal`). */
  resealStates(): Promise<ResealReport> {
    return resealColumns(this.profiles, this.cipher, ['stateSealed']);
  }

  /**
   * Creates a profile with `storageState` (none: an empty state) filtered to `allowedDomains`. Throws
   * 403 `PLAN_LIMIT_REACHED` (`details: { resource: "profiles", limit, plan }`) when the account has its
   * plan's number of profiles; nothing is written then.
   */
  async create(caller: Caller, dto: CreateProfileDto): Promise<ProfileDto> {
    const created = await this.profiles.manager.transaction((manager) =>
      this.insert(manager, caller.accountId, dto.name, [...new Set(dto.allowedDomains)], dto.storageState ?? {}),
    );
    return toDto(created);
  }

  /** The account's profiles, newest first, a page at a time. Throws 400 `VALIDATION_FAILED` for a cursor not issued here. */
  async list(caller: Caller, query: CursorPageQueryDto): Promise<ProfileListDto> {
    const qb = this.profiles.createQueryBuilder('p').where('p.account_id = :accountId', { accountId: caller.accountId });
    const { rows, nextCursor } = await newestFirstPage(qb, query, 'profile');
    return { data: rows.map(toDto), nextCursor };
  }

  /** One profile of the account. Throws 404 `NOT_FOUND` for an unknown id or another account's. */
  async get(caller: Caller, id: string): Promise<ProfileDto> {
    return toDto(await this.findOwn(caller.accountId, id));
  }

  /**
   * Changes the fields given: `name`; `allowedDomains` (the stored state is filtered to the new ones);
   * `storageState` replaces the whole state. A change of state or domains clears the expiry mark (the
   * next failed `profileCheck` sends `profile.expired` again) and is a new state version for the
   * capture cache. Throws 404 `NOT_FOUND` as {@link get}.
   */
  async update(caller: Caller, id: string, dto: UpdateProfileDto): Promise<ProfileDto> {
    const profile = await this.findOwn(caller.accountId, id);
    const nulls = (['name', 'allowedDomains', 'storageState'] as const).filter((field) => dto[field] === null);
    if (nulls.length)
      throw ApiError.validation(nulls.map((field) => ({ field, message: 'must not be null (leave it out to keep its value)' })));
    const changes: Partial<Profile> = { updatedAt: this.clock.now() };
    if (dto.name !== undefined) changes.name = dto.name;
    if (dto.allowedDomains !== undefined || dto.storageState !== undefined) {
      const allowedDomains = dto.allowedDomains ? [...new Set(dto.allowedDomains)] : profile.allowedDomains;
      const state = dto.storageState ?? this.openState(profile);
      Object.assign(changes, { allowedDomains }, this.sealedState(profile.id, state, allowedDomains), {
        stateVersion: profile.stateVersion + 1,
        expiredAt: null,
      });
    }
    await this.profiles.update({ id: profile.id }, changes);
    return toDto({ ...profile, ...changes });
  }

  /** Deletes the profile and its state; captures naming it are refused from now on (404). Throws 404 `NOT_FOUND` as {@link get}. */
  async remove(caller: Caller, id: string): Promise<void> {
    const profile = await this.findOwn(caller.accountId, id);
    await this.profiles.delete({ id: profile.id });
  }

  /**
   * Checks the `profile` option of each use at submission, before anything is counted (CONTRACT.md,
   * "Browser profiles"): the profile must be the account's (404 `NOT_FOUND` otherwise, also for
   * another account's) and the target URL's host within its `allowedDomains` (400
   * `PROFILE_DOMAIN_NOT_ALLOWED` naming `<prefix>profile` and the host). Returns each use's profile
   * state version (null without a profile), which the capture cache key includes.
   */
  async assertUsable(accountId: string, uses: ProfileUse[]): Promise<(number | null)[]> {
    const versions: (number | null)[] = [];
    for (const use of uses) {
      if (!use.profile) {
        versions.push(null);
        continue;
      }
      const profile = await this.findOwn(accountId, use.profile);
      const host = new URL(use.url).hostname;
      if (!hostAllowed(host, profile.allowedDomains)) {
        const field = `${use.prefix}profile`;
        throw new ApiError(
          ErrorCode.PROFILE_DOMAIN_NOT_ALLOWED,
          400,
          `${field}: profile ${profile.id} may not be used for ${host}: it is not within the profile's allowedDomains`,
          { field, host, allowedDomains: profile.allowedDomains },
        );
      }
      versions.push(profile.stateVersion);
    }
    return versions;
  }

  /**
   * For a capture or run starting now: the state of the account's profile `id`, filtered to its
   * `allowedDomains` again, and its `lastUsedAt` set. Null when the profile no longer exists (deleted
   * after the job was accepted). Throws `SecretUnreadableError` when the sealing key is gone.
   */
  async stateFor(accountId: string, id: string): Promise<StorageState | null> {
    const profile = await findAccountOwned(this.profiles, 'profile', id, accountId);
    if (!profile) return null;
    await this.profiles.update({ id: profile.id }, { lastUsedAt: this.clock.now() });
    return filterStorageState(this.openState(profile), profile.allowedDomains);
  }

  /**
   * Checks a run's `saveProfile` at submission: a `profileId` must be the account's profile (404
   * `NOT_FOUND`); `{ name, allowedDomains }` must fit in the plan (403 `PLAN_LIMIT_REACHED`), which is
   * checked again when the run completes.
   */
  async assertSavable(accountId: string, target: SaveProfileInput): Promise<void> {
    if ('profileId' in target) {
      await this.findOwn(accountId, target.profileId);
      return;
    }
    await this.profiles.manager.transaction((manager) => assertBelowPlanLimit(manager, accountId, 'profiles', PROFILES_SQL));
  }

  /**
   * Stores `state` (a completed run's context) into the profile `target` names, filtered to its
   * `allowedDomains`: the existing profile's state replaced, or a new profile created. Returns the
   * profile's id. Throws {@link ProfileSaveError} (customer-safe) when the profile is gone, the plan's
   * limit is reached or the state is over 1 MiB.
   */
  async saveState(accountId: string, target: SaveProfileInput, state: StorageState): Promise<string> {
    if ('profileId' in target) {
      const profile = await findAccountOwned(this.profiles, 'profile', target.profileId, accountId);
      if (!profile) throw new ProfileSaveError(`profile ${target.profileId} no longer exists`);
      const sealed = this.sealedOrRefused(profile.id, state, profile.allowedDomains);
      await this.profiles.update(
        { id: profile.id },
        { ...sealed, stateVersion: () => 'state_version + 1', expiredAt: null, updatedAt: this.clock.now() },
      );
      return profile.id;
    }
    try {
      const created = await this.profiles.manager.transaction((manager) =>
        this.insert(manager, accountId, target.name, [...new Set(target.allowedDomains)], state),
      );
      return created.id;
    } catch (err) {
      if (err instanceof ApiError) throw new ProfileSaveError(`the profile could not be created: ${err.message}`);
      throw err;
    }
  }

  /**
   * Sends `profile.expired` for the account's profile `id` unless it was sent since the profile's
   * state last changed (CONTRACT.md, "Browser profiles": once per profile until it is updated). The
   * mark and the event are one transaction. Nothing when the profile no longer exists.
   */
  async reportExpired(accountId: string, id: string, found: { screenshotId: string; url: string; selector: string }): Promise<void> {
    const { afterCommit } = await this.profiles.manager.transaction(async (manager): Promise<{ afterCommit: () => Promise<void> }> => {
      const marked = await manager
        .createQueryBuilder()
        .update(Profile)
        .set({ expiredAt: this.clock.now() })
        .where({ id, accountId, expiredAt: IsNull() })
        .returning(['name'])
        .execute();
      const row = (marked.raw as { name: string }[])[0];
      if (!row) return { afterCommit: () => Promise.resolve() };
      return this.events.publishWithin(manager, accountId, 'profile.expired', { profileId: id, name: row.name, ...found });
    });
    await afterCommit();
  }

  /** Inserts a profile after the plan check, inside `manager`'s transaction. Throws 403 `PLAN_LIMIT_REACHED`, 400 for a state over 1 MiB. */
  private async insert(
    manager: EntityManager,
    accountId: string,
    name: string,
    allowedDomains: string[],
    state: StorageStateInput | StorageState,
  ): Promise<Profile> {
    await assertBelowPlanLimit(manager, accountId, 'profiles', PROFILES_SQL);
    const id = newId('profile');
    const now = this.clock.now();
    const profile = manager.create(Profile, {
      id,
      accountId,
      name,
      allowedDomains,
      ...this.sealedState(id, state, allowedDomains),
      stateVersion: 1,
      expiredAt: null,
      createdAt: now,
      updatedAt: now,
      lastUsedAt: null,
    });
    await manager.insert(Profile, profile);
    return profile;
  }

  /**
   * The columns of `state` filtered to `allowedDomains`: sealed JSON and its counts. Throws 400
   * `VALIDATION_FAILED` naming `storageState` when the kept state is over 1 MiB.
   */
  private sealedState(
    id: string,
    state: StorageStateInput | StorageState,
    allowedDomains: string[],
  ): Pick<Profile, 'stateSealed' | 'cookieCount' | 'originCount' | 'sizeBytes'> {
    const kept = filterStorageState(state, allowedDomains);
    const sizeBytes = storageStateBytes(kept);
    if (sizeBytes > STORAGE_STATE_MAX_BYTES) {
      throw ApiError.validation([{ field: 'storageState', message: `must be at most ${STORAGE_STATE_MAX_BYTES} bytes of JSON (1 MiB)` }]);
    }
    return {
      stateSealed: this.cipher.seal(JSON.stringify(kept), id),
      cookieCount: kept.cookies.length,
      originCount: kept.origins.length,
      sizeBytes,
    };
  }

  /** {@link sealedState} for a run's state: over 1 MiB is a {@link ProfileSaveError}. */
  private sealedOrRefused(id: string, state: StorageState, allowedDomains: string[]): ReturnType<ProfilesService['sealedState']> {
    try {
      return this.sealedState(id, state, allowedDomains);
    } catch (err) {
      if (err instanceof ApiError) throw new ProfileSaveError(`the browser state is larger than ${STORAGE_STATE_MAX_BYTES} bytes`);
      throw err;
    }
  }

  private openState(profile: Profile): StorageState {
    return JSON.parse(this.cipher.open(profile.stateSealed, profile.id)) as StorageState;
  }

  private findOwn(accountId: string, id: string): Promise<Profile> {
    return requireAccountOwned(this.profiles, 'profile', id, accountId, 'Profile');
  }
}

/** The public shape: never the state. */
function toDto(p: Profile): ProfileDto {
  return publicColumns(p, [
    'id',
    'name',
    'allowedDomains',
    'cookieCount',
    'originCount',
    'sizeBytes',
    'createdAt',
    'updatedAt',
    'lastUsedAt',
  ]);
}
