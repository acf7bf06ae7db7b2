import { Inject, Injectable } from '@nestjs/common';
import { isIP } from 'node:net';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ApiError, ErrorCode } from '../common/api-error';
import { AddressPolicy } from './address-policy';
import { HostResolver } from './host-resolver';
import { withoutBrackets } from '../common/host-brackets';

/** Thrown by {@link SsrfGuard.addressToConnect} when a host may not be connected to; `message` says why. */
export class TargetRefusedError extends Error {}

/** Thrown by {@link SsrfGuard.addressToConnect} when a host name does not resolve. */
export class TargetUnresolvedError extends Error {}

/**
 * The SSRF guard for capture, webhook and browser-session target URLs (CONTRACT.md, "SSRF guard").
 * Only `http:` and `https:`; with `SSRF_ALLOW_PRIVATE` unset, a host that is, or resolves to, a
 * blocked address (see {@link AddressPolicy}) is refused.
 *
 * Both uses share one resolve-and-check routine ({@link addressToConnect}): {@link assertAllowed}
 * checks a URL when it is submitted (a fast, friendly 400), and the egress proxy calls
 * {@link addressToConnect} for every connection the browser makes: it resolves once with the injected
 * {@link HostResolver}, checks every address, and returns the checked address to dial, so a name that
 * resolves differently later (DNS rebinding) cannot reach a blocked address.
 */
@Injectable()
export class SsrfGuard {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly policy: AddressPolicy,
    private readonly resolver: HostResolver,
  ) {}

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
    try {
      await this.addressToConnect(url.hostname);
    } catch (err) {
      if (err instanceof TargetRefusedError) throw this.refuse(rawUrl, err.message);
      if (err instanceof TargetUnresolvedError) return;
      throw err;
    }
  }

  /**
   * The address to connect to for `host` (a name or an IP literal, brackets allowed): resolves it
   * once with the {@link HostResolver} and checks every address it has. Returns the first address; the
   * caller must dial exactly that address. Throws {@link TargetUnresolvedError} when the name does
   * not resolve, {@link TargetRefusedError} when any address is blocked.
   */
  async addressToConnect(host: string): Promise<string> {
    const bare = withoutBrackets(host);
    let addresses: string[];
    if (isIP(bare)) {
      addresses = [bare];
    } else {
      try {
        addresses = await this.resolver.resolve(bare);
      } catch (err) {
        throw new TargetUnresolvedError(`${bare} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'lookup failed'})`);
      }
      if (!addresses.length) throw new TargetUnresolvedError(`${bare} does not resolve`);
    }
    for (const address of addresses) {
      const reason = this.policy.blockedReason(address);
      // The host and the kind of address, never the address a name resolved to (CONTRACT.md, "SSRF
      // guard"): a refusal must not map the internal network for whoever submitted the URL.
      if (reason)
        throw new TargetRefusedError(
          isIP(bare) ? `${bare} is a blocked address (${reason})` : `${bare} resolves to a blocked address (${reason})`,
        );
    }
    return addresses[0];
  }

  private refuse(url: string, why: string): ApiError {
    return new ApiError(ErrorCode.TARGET_NOT_ALLOWED, 400, `Target not allowed: ${why}`, { url });
  }
}
