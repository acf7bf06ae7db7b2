import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';

/** Builds the OpenAPI document of the running module graph (served at /docs, written by `npm run openapi`). */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Glimpse API')
    .setDescription(
      'Self-hostable screenshot capture: submit a URL, poll the job until `done`, fetch the result URL. ' +
        'Every request carries `Authorization: Bearer <API_KEY>`; every error is `{ error, code, requestId, details? }`.',
    )
    .setVersion('1')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'API key `sk_live_…`' }, 'apiKey')
    .build();
  return SwaggerModule.createDocument(app, config, {
    operationIdFactory: (_controller, method) => method,
  });
}
