import { Inject, Injectable } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { UserView } from '../accounts/users.service';
import { ApiKeysService } from '../auth/api-keys.service';
import { CAPTURE_LIMITS } from '../capture/capture-options';
import { Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { CreatedRenderKeyDto, CreateRenderKeyDto, RenderKeyDto, RotatedRenderKeyDto } from '../render/dto/render-key.dto';
import { RENDER_FORMATS } from '../render/dto/render-link.dto';
import { RenderKeysService } from '../render/render-keys.service';
import { signedRenderLink, signaturesMatch } from '../render/render-signature';
import { notFoundAsPage } from './dashboard-request';
import { FormResult, ROTATION_OVERLAPS_S, validatedFormAction } from './dashboard.service';

/** How long a link built on the page stays valid, s: never (0), a day, 30 days. */
export const LINK_LIFETIMES_S = [0, 86_400, 2_592_000] as const;

/** A link the builder signed: the link, and how the page previews it (`img` for images and GIFs, `video` for MP4 and WebM, null for a PDF). */
export interface BuiltLink {
  href: string;
  preview: 'img' | 'video' | null;
}

/**
 * The Render links page (docs/dashboard.md): the account's render keys (created for one of its active
 * API keys, secret shown once; rotated, deleted) through {@link RenderKeysService} as the REST API,
 * and a link builder that signs on the server with a secret pasted into its form, used for that
 * request only (never stored, never rendered back).
 */
@Injectable()
export class DashboardRenderLinksService {
  constructor(
    private readonly renderKeys: RenderKeysService,
    private readonly apiKeys: ApiKeysService,
    private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** The account's render keys, oldest first. */
  async list(user: UserView): Promise<RenderKeyDto[]> {
    return (await this.renderKeys.list(user)).data;
  }

  /**
   * Creates a render key for one of the account's active API keys (validated like `POST
   * /v1/render-keys`; `allowedHosts` as text separated by commas or spaces). Its secret is in the
   * result only.
   */
  async create(user: UserView, form: Record<string, unknown>): Promise<FormResult<CreatedRenderKeyDto>> {
    const caller = await this.apiKeys.callerFor(user.accountId, String(form.apiKeyId ?? ''));
    if (!caller) return { ok: false, error: 'Choose one of your active API keys.' };
    const hosts = String(form.allowedHosts ?? '')
      .split(/[\s,]+/)
      .filter(Boolean);
    const dto = plainToInstance(CreateRenderKeyDto, { description: String(form.description ?? '').trim(), allowedHosts: hosts });
    return validatedFormAction(dto, () => this.renderKeys.create(caller, dto));
  }

  /** A new secret (shown once); the old one keeps signing for `overlap` s (one of {@link ROTATION_OVERLAPS_S}, default 0). 404 page for another account's key. */
  async rotate(user: UserView, id: string, overlap: unknown): Promise<RotatedRenderKeyDto & { overlapS: number }> {
    const overlapS = ROTATION_OVERLAPS_S.find((s) => String(s) === String(overlap)) ?? 0;
    const rotated = await notFoundAsPage(() => this.renderKeys.rotate(user, id, { expiresInSeconds: overlapS }));
    return { ...rotated, overlapS };
  }

  /** Deletes one of the account's render keys (its links stop at once); 404 page for another account's. */
  async remove(user: UserView, id: string): Promise<void> {
    await notFoundAsPage(() => this.renderKeys.remove(user, id));
  }

  /**
   * Signs a link from the builder's form: render key and its secret (checked against the key, in
   * constant time), page URL, format, width, height, full page, lifetime (one of
   * {@link LINK_LIFETIMES_S}). The link's other rules (options, hosts) are the render route's, when
   * it is requested.
   */
  async build(user: UserView, form: Record<string, unknown>): Promise<FormResult<BuiltLink>> {
    const keyId = String(form.renderKeyId ?? '');
    const secret = String(form.secret ?? '').trim();
    const verifier = await this.renderKeys.verifier(keyId);
    if (!verifier || verifier.caller.accountId !== user.accountId) return { ok: false, error: 'Choose one of your render keys.' };
    if (!verifier.secrets.map((s) => signaturesMatch(secret, s)).includes(true)) {
      return { ok: false, error: 'That secret does not belong to this render key (after a rotation, use the new one).' };
    }
    const url = String(form.url ?? '').trim();
    if (!/^https?:\/\/\S+$/i.test(url) || url.length > CAPTURE_LIMITS.urlMaxLength)
      return { ok: false, error: 'Enter an http(s) page URL.' };
    const format = (RENDER_FORMATS as readonly string[]).includes(String(form.format)) ? String(form.format) : 'png';
    const params: Record<string, string> = { url };
    for (const name of ['width', 'height'] as const) {
      const value = String(form[name] ?? '').trim();
      if (!value) continue;
      const { min, max } = CAPTURE_LIMITS[name];
      if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max)
        return { ok: false, error: `${name}: a whole number ${min}–${max}.` };
      params[name] = value;
    }
    if (form.fullPage) params.fullPage = 'true';
    const lifetimeS = LINK_LIFETIMES_S.find((s) => String(s) === String(form.lifetime)) ?? 0;
    if (lifetimeS) params.expires = String(Math.floor(this.clock.now().getTime() / 1000) + lifetimeS);
    return {
      ok: true,
      value: {
        href: signedRenderLink(this.config.publicBaseUrl, keyId, secret, format, params),
        preview: format === 'pdf' ? null : format === 'mp4' || format === 'webm' ? 'video' : 'img',
      },
    };
  }
}
