import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { assertBelowPlanLimit } from '../accounts/plan-limits';
import type { AuthenticatedKey } from '../auth/api-keys.service';
import { ApiKeysService } from '../auth/api-keys.service';
import { ApiError } from '../common/api-error';
import { Clock } from '../common/clock';
import { isId, newId, randomBase62 } from '../common/ids';
import { SecretCipher } from '../common/secret-cipher';
import {
  CreatedRenderKeyDto,
  CreateRenderKeyDto,
  RenderKeyDto,
  RenderKeyListDto,
  RotatedRenderKeyDto,
  RotateRenderKeyDto,
} from './dto/render-key.dto';
import { RenderKey } from './render-key.entity';

/** Counts the account's render keys for {@link assertBelowPlanLimit}. */
const RENDER_KEYS_SQL = `SELECT count(*)::int AS n FROM render_keys WHERE account_id = $1`;

/** Base62 characters after `rks_` in a render key secret (CONTRACT.md asks for at least 32). */
const SECRET_LENGTH = 40;

/** What verifying a render link needs of its key: the secrets that sign now, its hosts, and the caller it renders as. */
export interface RenderKeyVerifier {
  id: string;
  /** The current secret first, then the previous one during a rotation's overlap. */
  secrets: string[];
  allowedHosts: string[];
  /** The creating API key, active (a revoked key gives no verifier). */
  caller: AuthenticatedKey;
}

/**
 * Render keys (CONTRACT.md, "Render links"): created by an API key and bound to it, secrets sealed
 * with {@link SecretCipher} (bound to the key's id) and shown only at creation and rotation, at most
 * the plan's limit per account (CONTRACT.md, "Organizations and plan limits").
 */
@Injectable()
export class RenderKeysService {
  constructor(
    @InjectRepository(RenderKey) private readonly keys: Repository<RenderKey>,
    private readonly apiKeys: ApiKeysService,
    private readonly cipher: SecretCipher,
    private readonly clock: Clock,
  ) {}

  /**
   * Creates a render key for `caller`'s API key. Throws 403 `PLAN_LIMIT_REACHED` (`details: { resource,
   * limit, plan }`) when the account already has its plan's number of render keys.
   */
  async create(caller: AuthenticatedKey, dto: CreateRenderKeyDto): Promise<CreatedRenderKeyDto> {
    return this.keys.manager.transaction(async (manager) => {
      await assertBelowPlanLimit(manager, caller.accountId, 'render_keys', RENDER_KEYS_SQL);
      const id = newId('renderKey');
      const secret = newSecret();
      const key = manager.create(RenderKey, {
        id,
        accountId: caller.accountId,
        apiKeyId: caller.apiKeyId,
        description: dto.description ?? '',
        allowedHosts: [...new Set(dto.allowedHosts ?? [])],
        secretSealed: this.cipher.seal(secret, id),
        previousSecretSealed: null,
        previousSecretExpiresAt: null,
        createdAt: this.clock.now(),
      });
      await manager.insert(RenderKey, key);
      return { ...toDto(key), secret };
    });
  }

  /** The account's render keys, oldest first, without secrets. */
  async list(caller: Pick<AuthenticatedKey, 'accountId'>): Promise<RenderKeyListDto> {
    const keys = await this.keys.find({ where: { accountId: caller.accountId }, order: { createdAt: 'ASC', id: 'ASC' } });
    return { data: keys.map(toDto) };
  }

  /**
   * A new secret for the key; the old one keeps signing for `expiresInSeconds` (default 0). Throws 404
   * `NOT_FOUND` for an unknown id or another account's.
   */
  async rotate(caller: Pick<AuthenticatedKey, 'accountId'>, id: string, dto: RotateRenderKeyDto): Promise<RotatedRenderKeyDto> {
    const key = await this.findOwn(caller, id);
    const overlapS = dto.expiresInSeconds ?? 0;
    const secret = newSecret();
    await this.keys.update(
      { id: key.id },
      {
        secretSealed: this.cipher.seal(secret, key.id),
        previousSecretSealed: overlapS > 0 ? key.secretSealed : null,
        previousSecretExpiresAt: overlapS > 0 ? new Date(this.clock.now().getTime() + overlapS * 1000) : null,
      },
    );
    return { id: key.id, secret };
  }

  /** Deletes the key: its links fail at once. Throws 404 `NOT_FOUND` as {@link rotate}. */
  async remove(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<void> {
    const key = await this.findOwn(caller, id);
    await this.keys.delete({ id: key.id });
  }

  /**
   * What verifying a link of render key `id` needs, or null when the key is malformed, unknown,
   * deleted, or its API key was revoked (one answer for all: 401 `INVALID_SIGNATURE`).
   */
  async verifier(id: string): Promise<RenderKeyVerifier | null> {
    const key = isId('renderKey', id) ? await this.keys.findOneBy({ id }) : null;
    if (!key) return null;
    const caller = await this.apiKeys.callerFor(key.accountId, key.apiKeyId);
    if (!caller) return null;
    const secrets = [this.cipher.open(key.secretSealed, key.id)];
    if (key.previousSecretSealed && key.previousSecretExpiresAt && key.previousSecretExpiresAt.getTime() > this.clock.now().getTime()) {
      secrets.push(this.cipher.open(key.previousSecretSealed, key.id));
    }
    return { id: key.id, secrets, allowedHosts: key.allowedHosts, caller };
  }

  private async findOwn(caller: Pick<AuthenticatedKey, 'accountId'>, id: string): Promise<RenderKey> {
    const key = isId('renderKey', id) ? await this.keys.findOneBy({ id, accountId: caller.accountId }) : null;
    if (!key) throw ApiError.notFound('Render key');
    return key;
  }
}

function newSecret(): string {
  return `rks_${randomBase62(SECRET_LENGTH)}`;
}

function toDto(key: RenderKey): RenderKeyDto {
  return {
    id: key.id,
    apiKeyId: key.apiKeyId,
    description: key.description,
    allowedHosts: key.allowedHosts,
    createdAt: key.createdAt.toISOString(),
  };
}
