import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { ApiError } from '../common/api-error';
import { DashboardError, DashboardRequest, SignInRequired } from './dashboard-request';
import { DashboardViews } from './dashboard-views';
import { errorPage } from './dashboard.middleware';

/**
 * Errors of dashboard routes as HTML pages instead of the API's JSON envelope: a missing session is a
 * 303 to the sign-in page (htmx requests get `HX-Redirect`), {@link DashboardError}s and 4xx errors of
 * the services render the error page with their status, anything else is a logged 500 page.
 */
@Catch()
export class DashboardExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Dashboard');

  constructor(private readonly views: DashboardViews) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const req = host.switchToHttp().getRequest<DashboardRequest>();
    const res = host.switchToHttp().getResponse<Response>();
    if (res.headersSent) return;
    if (exception instanceof SignInRequired) {
      if (req.headers['hx-request']) {
        res.setHeader('HX-Redirect', '/dashboard/login');
        res.status(204).end();
        return;
      }
      res.redirect(303, '/dashboard/login');
      return;
    }
    const context = { signedIn: req.dashboard?.signedIn ?? null, csrfToken: req.dashboard?.csrfToken ?? '', active: '' };
    if (exception instanceof DashboardError) {
      return this.views.send(res, exception.status, 'error', {
        ...context,
        status: exception.status,
        title: exception.title,
        message: exception.message,
      });
    }
    const status = exception instanceof ApiError ? exception.status : exception instanceof HttpException ? exception.getStatus() : 500;
    if (status === 404) {
      const notFound = DashboardError.notFound();
      return this.views.send(res, 404, 'error', { ...context, status: 404, title: notFound.title, message: notFound.message });
    }
    if (status >= 400 && status < 500) {
      return this.views.send(res, status, 'error', {
        ...context,
        status,
        title: 'Request not accepted',
        message: (exception as Error).message,
      });
    }
    this.logger.error(`${req.method} ${req.path} failed`, exception instanceof Error ? exception.stack : String(exception));
    this.views.send(res, 500, 'error', {
      ...errorPage(500, 'Something went wrong', 'The dashboard could not complete this request. Try again in a moment.'),
      ...context,
    });
  }
}
