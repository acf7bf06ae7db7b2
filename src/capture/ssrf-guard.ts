import { Inject, Injectable } from '@nestjs/common';
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ApiError, ErrorCode } from '../common/api-error';
import { blockedAddressReason } from './address-policy';

/** Resolves a host name to all of its addresses; replaceable in tests. */
export type HostResolver = (host: string) => Promise<string[]>;

/** The system resolver (`getaddrinfo`, as the browser uses), every address family. */
export const systemResolver: HostResolver = async (host) =>
  (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/**
 * The SSRF guard for capture and webhook target URLs (CONTRACT.md, "SSRF guard").
 * Only `http:` and `https:`; with `SSRF_ALLOW_PRIVATE` unset, a host that is, or resolves to, a
 * blocked address (see {@link blockedAddressReason}) is refused.
 */
@Injectable()
export class SsrfGuard {
  private resolver: HostResolver = systemResolver;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  /** Replaces the resolver (tests only: a stub that answers differently on each lookup). */
  useResolver(resolver: HostResolver): void {
    this.resolver = resolver;
  }

  /**
   * Checks a URL before the service connects to it. A name that does not resolve passes (the
   * connection then fails with the browser's own error). Throws 400 `TARGET_NOT_ALLOWED`.
   */
  async assertAllowed(rawUrl: string): Promise<void> {
    let url: URL;
    try {
      url = new URL(rawUrl);
    } catch {
      throw this.refuse(rawUrl, 'not an absolute URL');
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw this.refuse(rawUrl, `scheme ${url.protocol} is not allowed`);
    if (this.config.ssrfAllowPrivate) return;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    let addresses: string[];
    if (isIP(host)) {
      addresses = [host];
    } else {
      try {
        addresses = await this.resolver(host);
      } catch {
        return;
      }
    }
    for (const address of addresses) {
      const reason = blockedAddressReason(address);
      if (reason) throw this.refuse(rawUrl, `${host} resolves to ${address} (${reason})`);
    }
  }

  private refuse(url: string, why: string): ApiError {
    return new ApiError(ErrorCode.TARGET_NOT_ALLOWED, 400, `Target not allowed: ${why}`, { url });
  }
}
