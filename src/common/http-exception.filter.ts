import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiError, ErrorCode } from './api-error';
import { isDependencyUnavailable, SERVICE_UNAVAILABLE_RETRY_AFTER_S } from './dependency-errors';
import { sendError } from './error-envelope';
import { requestIdOf } from './request-context';

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: ErrorCode.VALIDATION_FAILED,
  401: ErrorCode.UNAUTHENTICATED,
  404: ErrorCode.ROUTE_NOT_FOUND,
  413: ErrorCode.PAYLOAD_TOO_LARGE,
  415: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
};

/**
 * Maps anything thrown to an {@link ApiError} and renders the envelope. A framework `HttpException`
 * keeps its status when a contract code exists for it (a Nest 404 is an unknown route); PostgreSQL (or
 * another dependency) out of reach is 503 `SERVICE_UNAVAILABLE` with `Retry-After` (CONTRACT.md, "Rate
 * limits and back-pressure"); everything else is 500 `INTERNAL_ERROR`, logged with its stack and never
 * described in the body.
 */
@Catch()
export class HttpExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpExceptionFilter');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const req = http.getRequest<Request>();
    const res = http.getResponse<Response>();
    if (res.headersSent) return;
    sendError(res, requestIdOf(req), this.toApiError(exception, req));
  }

  private toApiError(exception: unknown, req: Request): ApiError {
    if (exception instanceof ApiError) return exception;
    if (exception instanceof HttpException && CODE_BY_STATUS[exception.getStatus()]) {
      const status = exception.getStatus();
      const message = status === 404 ? `No route ${req.method} ${req.path}` : exception.message;
      return new ApiError(CODE_BY_STATUS[status], status, message);
    }
    if (isDependencyUnavailable(exception)) {
      this.logger.warn(`${req.method} ${req.path}: a dependency is unavailable (${(exception as Error).message})`);
      return new ApiError(
        ErrorCode.SERVICE_UNAVAILABLE,
        503,
        'The service cannot reach its database right now; nothing was accepted. Retry later',
        undefined,
        {
          'Retry-After': String(SERVICE_UNAVAILABLE_RETRY_AFTER_S),
        },
      );
    }
    this.logger.error(
      `${req.method} ${req.path} failed (requestId ${requestIdOf(req)})`,
      exception instanceof Error ? exception.stack : String(exception),
    );
    return new ApiError(ErrorCode.INTERNAL_ERROR, 500, 'Internal server error');
  }
}
