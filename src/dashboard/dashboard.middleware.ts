import { Inject, Injectable, NestMiddleware } from '@nestjs/common';
import { parseCookie, stringifySetCookie } from 'cookie';
import express, { NextFunction, Request, Response } from 'express';
import helmet from 'helmet';
import { randomBytes } from 'node:crypto';
import { APP_CONFIG, AppConfig, dashboardUrlOf } from '../config/app-config';
import { ANONYMOUS_CSRF_COOKIE, CSRF_FIELD, DashboardContext, DashboardRequest, SESSION_COOKIE } from './dashboard-request';
import { DashboardSessionsService } from './dashboard-sessions.service';
import { DashboardViews } from './dashboard-views';

/** Largest dashboard form body, bytes. */
const FORM_BODY_LIMIT_BYTES = 64 * 1024;

/** Whether dashboard cookies get `Secure` (CONTRACT.md, "Dashboard": on https). */
export function secureCookies(config: AppConfig): boolean {
  return dashboardUrlOf(config).startsWith('https:') || config.publicBaseUrl.startsWith('https:');
}

/** `Set-Cookie` value of the session cookie (or its removal with `token` null). */
export function sessionCookie(config: AppConfig, token: string | null): string {
  return stringifySetCookie({
    name: SESSION_COOKIE,
    value: token ?? '',
    path: '/dashboard',
    httpOnly: true,
    sameSite: 'lax',
    secure: secureCookies(config),
    ...(token ? {} : { maxAge: 0 }),
  });
}

/** The Profiles page's add form (its `storageState` field: a Playwright state file, CONTRACT.md "Browser profiles"). */
const PROFILE_FORM_PATH = '/dashboard/profiles';

/**
 * Largest body of {@link PROFILE_FORM_PATH}, bytes: a state of 1 MiB of JSON, percent-encoded (up to
 * three bytes per byte), and the other fields. The state's own 1 MiB cap is checked as by the API.
 */
const PROFILE_FORM_BODY_LIMIT_BYTES = 3 * 1024 * 1024 + 64 * 1024;

/**
 * Every dashboard request passes here (CONTRACT.md, "Dashboard"):
 * 1. security headers (helmet): a CSP without inline script or style, `frame-ancestors 'none'`,
 *    `Referrer-Policy: no-referrer` (set-password links carry their token in the path), nosniff;
 * 2. form bodies (`application/x-www-form-urlencoded`, at most 64 KiB; the Profiles page's add form, which
 *    carries a browser state of up to 1 MiB of JSON, at most {@link PROFILE_FORM_BODY_LIMIT_BYTES});
 * 3. the session from its cookie, or a double-submit CSRF cookie for signed-out forms;
 * 4. the CSRF check: a POST without the session's token in `_csrf` (or `X-CSRF-Token`) is a 403 page.
 * Whether a page needs a session is decided by {@link DashboardAuthGuard}.
 */
@Injectable()
export class DashboardMiddleware implements NestMiddleware {
  private readonly headers: ReturnType<typeof helmet>;
  private readonly parseForm = express.urlencoded({ extended: false, limit: FORM_BODY_LIMIT_BYTES });
  private readonly parseProfileForm = express.urlencoded({ extended: false, limit: PROFILE_FORM_BODY_LIMIT_BYTES });

  constructor(
    private readonly sessions: DashboardSessionsService,
    private readonly views: DashboardViews,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    const resultOrigin = new URL(config.publicBaseUrl).origin;
    this.headers = helmet({
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          defaultSrc: ["'self'"],
          scriptSrc: ["'self'"],
          styleSrc: ["'self'"],
          // Result images may live on PUBLIC_BASE_URL's origin or an object store.
          imgSrc: ["'self'", 'data:', 'https:', resultOrigin],
          // Run videos (the Runs page's <video>) are result files too.
          mediaSrc: ["'self'", 'https:', resultOrigin],
          connectSrc: ["'self'"],
          fontSrc: ["'self'"],
          objectSrc: ["'none'"],
          baseUri: ["'none'"],
          formAction: ["'self'"],
          frameAncestors: ["'none'"],
        },
      },
      referrerPolicy: { policy: 'no-referrer' },
      xFrameOptions: { action: 'deny' },
      crossOriginEmbedderPolicy: false,
      strictTransportSecurity: secureCookies(config),
    });
  }

  use(req: Request, res: Response, next: NextFunction): void {
    // A path can match two dashboard routes (a page and the catch-all 404): run once.
    if ((req as Partial<DashboardRequest>).dashboard) return next();
    this.headers(req, res, (err?: unknown) => {
      if (err) return next(err);
      const parse = req.method === 'POST' && req.originalUrl.split('?')[0] === PROFILE_FORM_PATH ? this.parseProfileForm : this.parseForm;
      parse(req, res, (err2?: unknown) => {
        if (err2) return this.views.send(res, 413, 'error', errorPage(413, 'Form too large', 'That form was too large to accept.'));
        this.attach(req as DashboardRequest, res).then(
          (ok) => ok && next(),
          (err3) => next(err3),
        );
      });
    });
  }

  /** Loads the session, sets up the CSRF token, checks it on state-changing requests. False when answered here. */
  private async attach(req: DashboardRequest, res: Response): Promise<boolean> {
    const cookies = parseCookie(req.headers.cookie ?? '');
    const sessionToken = cookies[SESSION_COOKIE] || null;
    const signedIn = sessionToken ? await this.sessions.resolve(sessionToken) : null;
    if (sessionToken && !signedIn) res.append('Set-Cookie', sessionCookie(this.config, null));
    let csrfToken = signedIn?.csrfToken ?? cookies[ANONYMOUS_CSRF_COOKIE];
    if (!csrfToken) {
      csrfToken = randomBytes(32).toString('base64url');
      res.append(
        'Set-Cookie',
        stringifySetCookie({
          name: ANONYMOUS_CSRF_COOKIE,
          value: csrfToken,
          path: '/dashboard',
          httpOnly: true,
          sameSite: 'lax',
          secure: secureCookies(this.config),
        }),
      );
    }
    const context: DashboardContext = { signedIn, csrfToken, sessionToken };
    req.dashboard = context;
    if (req.method === 'GET' || req.method === 'HEAD') return true;
    const presented = (req.body as Record<string, unknown> | undefined)?.[CSRF_FIELD] ?? req.headers['x-csrf-token'];
    // A signed-out request whose CSRF cookie was only now created cannot match: refused as well.
    if (cookies[ANONYMOUS_CSRF_COOKIE] === undefined && !signedIn) {
      this.views.send(res, 403, 'error', errorPage(403, 'Form expired', 'This form has expired. Go back, reload the page and try again.'));
      return false;
    }
    if (!DashboardSessionsService.csrfMatches(csrfToken, presented)) {
      this.views.send(
        res,
        403,
        'error',
        errorPage(403, 'Form expired', 'This form has expired or did not come from this dashboard. Reload the page and try again.'),
      );
      return false;
    }
    return true;
  }
}

/** Data of the stand-alone error page. */
export function errorPage(status: number, title: string, message: string): Record<string, unknown> {
  return { status, title, message, signedIn: null, csrfToken: '' };
}
