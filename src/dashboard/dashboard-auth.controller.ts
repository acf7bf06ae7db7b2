import { Body, Controller, Get, Inject, Param, Post, Req, Res, UseFilters, UseGuards } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { DashboardAuthGuard, PublicPage } from './dashboard-auth.guard';
import { DashboardExceptionFilter } from './dashboard-exception.filter';
import { DashboardRequest, DashboardError } from './dashboard-request';
import { DashboardSignInService } from './dashboard-sign-in.service';
import { DashboardViews } from './dashboard-views';
import { sessionCookie } from './dashboard.middleware';

type Form = Record<string, string | undefined>;

/** Sign-in, sign-out, sign-up and set-password pages (CONTRACT.md, "Dashboard"). */
@ApiExcludeController()
@Controller('dashboard')
@UseGuards(DashboardAuthGuard)
@UseFilters(DashboardExceptionFilter)
export class DashboardAuthController {
  constructor(
    private readonly signIn: DashboardSignInService,
    private readonly views: DashboardViews,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @PublicPage()
  @Get('login')
  loginPage(@Req() req: DashboardRequest, @Res() res: Response): void {
    if (req.dashboard.signedIn) return res.redirect(303, '/dashboard');
    this.views.send(res, 200, 'login', this.anonymous(req, { email: '' }));
  }

  @PublicPage()
  @Post('login')
  async login(@Req() req: DashboardRequest, @Res() res: Response, @Body() form: Form): Promise<void> {
    const outcome = await this.signIn.signIn(form.email ?? '', form.password ?? '', req.dashboard.sessionToken, client(req));
    if (outcome.kind === 'limited') {
      res.setHeader('Retry-After', String(outcome.retryAfterS));
      return this.views.send(res, 429, 'login', this.anonymous(req, { email: form.email ?? '', error: 'Too many failed sign-ins for this email from your network. Wait 15 minutes and try again.' }));
    }
    if (outcome.kind === 'failed') {
      return this.views.send(res, 401, 'login', this.anonymous(req, { email: form.email ?? '', error: 'That email and password do not match.' }));
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
    const outcome = await this.signIn.signUp(form.email ?? '', form.password ?? '', req.dashboard.sessionToken, client(req));
    if (!outcome.ok) return this.views.send(res, 400, 'signup', this.anonymous(req, { email: form.email ?? '', error: outcome.error }));
    res.setHeader('Set-Cookie', sessionCookie(this.config, outcome.value));
    res.redirect(303, '/dashboard');
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
    const outcome = await this.signIn.setPassword(token, form.password ?? '', form.confirmPassword ?? '', req.dashboard.sessionToken, client(req));
    if (!outcome.ok) {
      const user = await this.signIn.userOfLink(token);
      return this.views.send(res, user ? 400 : 410, 'set-password', this.anonymous(req, { user, token, error: outcome.error }));
    }
    res.setHeader('Set-Cookie', sessionCookie(this.config, outcome.value));
    res.redirect(303, '/dashboard');
  }

  private anonymous(req: DashboardRequest, data: Record<string, unknown>): Record<string, unknown> {
    return { signedIn: null, csrfToken: req.dashboard.csrfToken, signupOpen: this.config.dashboardSignup, active: '', ...data };
  }
}

function client(req: DashboardRequest): { ip: string; userAgent: string } {
  return { ip: req.ip ?? req.socket.remoteAddress ?? 'unknown', userAgent: String(req.headers['user-agent'] ?? '') };
}
