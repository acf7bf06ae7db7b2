import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { Response } from 'express';
import { ApiError } from './api-error';

/** The error envelope of every error response (spec section 7.2). */
export class ErrorEnvelopeDto {
  @ApiProperty({ description: 'Human-readable message', example: 'API key not recognised' })
  error: string;
  @ApiProperty({ description: 'Stable machine code; treat unknown codes as transient', example: 'INVALID_API_KEY' })
  code: string;
  @ApiProperty({ description: 'Same value as the X-Request-ID header', example: 'req_4kq1Jd0aZxY2mNw8PqRs' })
  requestId: string;
  @ApiPropertyOptional({ description: 'Context whose shape depends on `code`', type: 'object', additionalProperties: true })
  details?: Record<string, unknown>;
}

/** Writes `err` as the envelope with its status and headers. `requestId` must equal the response's X-Request-ID. */
export function sendError(res: Response, requestId: string, err: ApiError): void {
  for (const [name, value] of Object.entries(err.headers ?? {})) res.setHeader(name, value);
  const body: ErrorEnvelopeDto = { error: err.message, code: err.code, requestId };
  if (err.details) body.details = err.details;
  res.status(err.status).json(body);
}
