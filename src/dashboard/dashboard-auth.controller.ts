import { Body, Controller, Get, Inject, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { parseCookie, stringifySetCookie } from 'cookie';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { DashboardAuthGuard, PublicPage } from './dashboard-auth.guard';
import { DashboardExceptionFilter } from './dashboard-exception.filter';
import { DashboardRequest, DashboardError } from './dashboard-request';
import { DashboardSignInService } from './dashboard-sign-in.service';
import { DashboardViews } from './dashboard-views';
import { DashboardOidcService, OIDC_FLOW_TTL_S, OidcFlow, OidcSignInError } from './dashboard-oidc.service';
import { secureCookies, sessionCookie } from './dashboard.middleware';

/** Cookie carrying an OpenID Connect sign-in's state, nonce and PKCE verifier to its callback. */
const OIDC_FLOW_COOKIE = 'glimpse_oidc';

type Form = Record<string, string | undefined>;

/** Where every accepted sign-up goes, whether or not its email was known: the sign-in page, with a neutral notice. */
const SIGNED_UP_LOCATION = '/dashboard/login?signed-up=1';

/** Sign-in, sign-out, sign-up and set-password pages (CONTRACT.md, "Dashboard"). */
@ApiExcludeController()
@Controller('dashboard')
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardExceptionFilter)
export class DashboardAuthController {
  constructor(
    private readonly signIn: DashboardSignInService,
    private readonly views: DashboardViews,
    private readonly oidc: DashboardOidcService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @PublicPage()
  @Get('login')
  loginPage(@Req() req: DashboardRequest, @Res() res: Response): void {
    if (req.dashboard.signedIn) return res.redirect(303, '/dashboard');
    this.views.send(res, 200, 'login', this.anonymous(req, { email: '', signedUp: req.query['signed-up'] === '1' }));
  }

  @PublicPage()
  @Post('login')
  async login(@Req() req: DashboardRequest, @Res() res: Response, @Body() form: Form): Promise<void> {
    const outcome = await this.signIn.signIn(form.email ?? '', form.password ?? '', req.dashboard.sessionToken, client(req));
    if (outcome.kind === 'limited') {
      res.setHeader('Retry-After', String(outcome.retryAfterS));
      const error = outcome.limit === 'ip' ? 'Too many failed sign-ins from your network.' : 'Too many failed sign-ins for this email.';
      return this.views.send(
        res,
        429,
        'login',
        this.anonymous(req, { email: form.email ?? '', error: `${error} Wait 15 minutes and try again.` }),
      );
    }
    if (outcome.kind === 'failed') {
      return this.views.send(
        res,
        401,
        'login',
        this.anonymous(req, { email: form.email ?? '', error: 'That email and password do not match.' }),
      );
    }
    res.setHeader('Set-Cookie', sessionCookie(this.config, outcome.token));
    res.redirect(303, '/dashboard');
  }

  @Post('logout')
  async logout(@Req() req: DashboardRequest, @Res() res: Response): Promise<void> {
    await this.signIn.signOut(req.dashboard.sessionToken);
    res.setHeader('Set-Cookie', sessionCookie(this.config, null));
    res.redirect(303, '/dashboard/login');
  }

  @PublicPage()
  @Get('signup')
  signupPage(@Req() req: DashboardRequest, @Res() res: Response): void {
    if (!this.config.dashboardSignup) throw DashboardError.notFound();
    this.views.send(res, 200, 'signup', this.anonymous(req, { email: '' }));
  }

  @PublicPage()
  @Post('signup')
  async signup(@Req() req: DashboardRequest, @Res() res: Response, @Body() form: Form): Promise<void> {
    if (!this.config.dashboardSignup) throw DashboardError.notFound();
    const outcome = await this.signIn.signUp(form.email ?? '', form.password ?? '', client(req));
    if ('kind' in outcome) {
      res.setHeader('Retry-After', String(outcome.retryAfterS));
      return this.views.send(
        res,
        429,
        'signup',
        this.anonymous(req, { email: form.email ?? '', error: 'Too many sign-ups from your network. Try again later.' }),
      );
    }
    if (!outcome.ok) return this.views.send(res, 400, 'signup', this.anonymous(req, { email: form.email ?? '', error: outcome.error }));
    // The same answer whether or not the email already had an account, and no session in either case:
    // the sign-in page, where the new user signs in (CONTRACT.md, "Dashboard").
    res.redirect(303, SIGNED_UP_LOCATION);
  }

  @PublicPage()
  @Get('set-password/:token')
  async setPasswordPage(@Req() req: DashboardRequest, @Res() res: Response, @Param('token') token: string): Promise<void> {
    const user = await this.signIn.userOfLink(token);
    this.views.send(res, user ? 200 : 410, 'set-password', this.anonymous(req, { user, token }));
  }

  @PublicPage()
  @Post('set-password/:token')
  async setPassword(@Req() req: DashboardRequest, @Res() res: Response, @Param('token') token: string, @Body() form: Form): Promise<void> {
    const outcome = await this.signIn.setPassword(
      token,
      form.password ?? '',
      form.confirmPassword ?? '',
      req.dashboard.sessionToken,
      client(req),
    );
    if (!outcome.ok) {
      const user = await this.signIn.userOfLink(token);
      return this.views.send(res, user ? 400 : 410, 'set-password', this.anonymous(req, { user, token, error: outcome.error }));
    }
    res.setHeader('Set-Cookie', sessionCookie(this.config, outcome.value));
    res.redirect(303, '/dashboard');
  }

  /** OpenID Connect: to the identity provider, with state, nonce and PKCE kept in a 10-minute cookie. */
  @PublicPage()
  @Get('oidc/start')
  async oidcStart(@Res() res: Response): Promise<void> {
    if (!this.oidc.enabled) throw DashboardError.notFound();
    const { url, flow } = await this.signInStep(() => this.oidc.start());
    res.setHeader('Set-Cookie', this.flowCookie(flow));
    res.redirect(303, url);
  }

  /** OpenID Connect callback: the provider's verified email signs in the matching user. */
  @PublicPage()
  @Get('oidc/callback')
  async oidcCallback(@Req() req: DashboardRequest, @Res() res: Response): Promise<void> {
    if (!this.oidc.enabled) throw DashboardError.notFound();
    const flow = readFlow(parseCookie(req.headers.cookie ?? '')[OIDC_FLOW_COOKIE]);
    const user = await this.signInStep(() => this.oidc.finish(req, flow));
    const token = await this.signIn.signInVerified(user, req.dashboard.sessionToken, client(req));
    res.setHeader('Set-Cookie', [this.flowCookie(null), sessionCookie(this.config, token)]);
    res.redirect(303, '/dashboard');
  }

  private async signInStep<T>(step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (err) {
      if (err instanceof OidcSignInError) throw new DashboardError(403, 'Single sign-on failed', err.message);
      throw err;
    }
  }

  private flowCookie(flow: OidcFlow | null): string {
    return stringifySetCookie({
      name: OIDC_FLOW_COOKIE,
      value: flow ? Buffer.from(JSON.stringify(flow)).toString('base64url') : '',
      path: '/dashboard/oidc',
      httpOnly: true,
      sameSite: 'lax',
      secure: secureCookies(this.config),
      maxAge: flow ? OIDC_FLOW_TTL_S : 0,
    });
  }

  private anonymous(req: DashboardRequest, data: Record<string, unknown>): Record<string, unknown> {
    return {
      signedIn: null,
      csrfToken: req.dashboard.csrfToken,
      signupOpen: this.config.dashboardSignup,
      oidcEnabled: this.oidc.enabled,
      active: '',
      ...data,
    };
  }
}

/** The flow kept in the cookie, or null when it is missing or not ours. */
function readFlow(raw: string | undefined): OidcFlow | null {
  if (!raw) return null;
  try {
    const flow = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Partial<OidcFlow>;
    return typeof flow.state === 'string' && typeof flow.nonce === 'string' && typeof flow.codeVerifier === 'string'
      ? (flow as OidcFlow)
      : null;
  } catch {
    return null;
  }
}

function client(req: DashboardRequest): { ip: string; userAgent: string } {
  return { ip: req.ip ?? req.socket.remoteAddress ?? 'unknown', userAgent: String(req.headers['user-agent'] ?? '') };
}
