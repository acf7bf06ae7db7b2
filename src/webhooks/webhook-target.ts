import { Inject, Injectable } from '@nestjs/common';
import { SsrfGuard } from '../egress/ssrf-guard';
import { ApiError, ErrorCode } from '../common/api-error';
import { APP_CONFIG, AppConfig } from '../config/app-config';

/**
 * Why a webhook URL may not be used before any DNS lookup, or null: it must be `https:` unless
 * `allowHttp` (CONTRACT.md "Webhooks", `WEBHOOK_ALLOW_HTTP`), and carry no user name or password
 * (fetch refuses those, and a secret in a URL would show in logs).
 */
export function webhookUrlProblem(rawUrl: string, allowHttp: boolean): string | null {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return 'not an absolute URL';
  }
  if (url.protocol !== 'https:' && !(allowHttp && url.protocol === 'http:')) {
    return allowHttp ? `scheme ${url.protocol} is not allowed (http or https only)` : `scheme ${url.protocol} is not allowed (https only)`;
  }
  if (url.username || url.password) return 'credentials in the URL are not allowed';
  return null;
}

/** The rule for webhook targets, checked at creation and again before every attempt (DNS can change). */
@Injectable()
export class WebhookTargetPolicy {
  constructor(
    private readonly ssrfGuard: SsrfGuard,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /**
   * Throws 400 `TARGET_NOT_ALLOWED` when the URL fails {@link webhookUrlProblem} or the SSRF guard
   * (blocked address ranges unless `SSRF_ALLOW_PRIVATE`, CONTRACT.md "SSRF guard").
   */
  async assertAllowed(url: string): Promise<void> {
    const problem = webhookUrlProblem(url, this.config.webhookAllowHttp);
    if (problem) throw new ApiError(ErrorCode.TARGET_NOT_ALLOWED, 400, `Target not allowed: ${problem}`, { url });
    await this.ssrfGuard.assertAllowed(url);
  }
}
