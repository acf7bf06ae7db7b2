import 'reflect-metadata';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Controller, Get, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ApiExtraModels, DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type * as Artifacts from './artifacts';

/*
 * The job DTO and `screenshot.completed`'s data DTO take their artifact fields from the artifacts table
 * (src/results/artifacts.ts, `openapi`), so a new entry is on both, in the OpenAPI document, with no
 * other change.
 */

type Schemas = Record<string, { properties: Record<string, Record<string, unknown>>; required?: string[] }>;

/** The OpenAPI schemas of `models` (and of the models they refer to), as `@nestjs/swagger` builds them for a document. */
async function schemasOf(...models: (new () => unknown)[]): Promise<Schemas> {
  @ApiExtraModels(...models)
  @Controller()
  class Probe {
    @Get()
    get(): void {}
  }
  @Module({ controllers: [Probe] })
  class ProbeModule {}
  const app = await NestFactory.create(ProbeModule, { logger: false });
  try {
    return SwaggerModule.createDocument(app, new DocumentBuilder().build()).components?.schemas as Schemas;
  } finally {
    await app.close();
  }
}

/** The job DTO and the event's data DTO, loaded afresh after `change` ran on a fresh artifacts table. */
function dtosWith(change: (artifacts: typeof Artifacts) => void): { job: new () => unknown; event: new () => unknown } {
  let loaded!: { job: new () => unknown; event: new () => unknown };
  jest.isolateModules(() => {
    change(jest.requireActual<typeof Artifacts>('./artifacts'));
    loaded = {
      job: jest.requireActual('../screenshots/dto/screenshot-job.dto').ScreenshotJobDto,
      event: jest.requireActual('../webhooks/dto/webhook-events.dto').ScreenshotCompletedDataDto,
    };
  });
  return loaded;
}

describe('artifact fields of the job and of screenshot.completed (src/results/artifact-fields.dto.ts)', () => {
  /** The OpenAPI document as committed (`npm run openapi:check` keeps it equal to the code's). */
  const document = JSON.parse(readFileSync(join(__dirname, '../../openapi/openapi.json'), 'utf8')) as {
    components: { schemas: Schemas };
    webhooks: Record<
      string,
      { post: { requestBody: { content: { 'application/json': { example: { data: Record<string, unknown> } } } } } }
    >;
  };

  it('documents every entry of the table on the job and on the event, with its schema and its example', () => {
    const { artifactEntries } = jest.requireActual<typeof Artifacts>('./artifacts');
    const { ScreenshotJobDto: job, ScreenshotCompletedDataDto: event } = document.components.schemas;
    const example = document.webhooks['screenshot.completed'].post.requestBody.content['application/json'].example.data;
    for (const [, a] of artifactEntries()) {
      expect(job.properties[a.jobField]).toMatchObject({ description: a.openapi.job.description });
      expect(job.required).toContain(a.jobField);
      if (!a.eventField) continue;
      expect(event.properties[a.eventField]).toMatchObject({ description: a.openapi.event?.description });
      expect(example[a.eventField]).toEqual(a.openapi.example);
    }
    expect(Object.keys(event.properties)).not.toContain('storage');
  });

  it('shows a new entry on both DTOs, as the table declares it, without touching them', async () => {
    const { job, event } = dtosWith(({ RESULT_ARTIFACTS, ARTIFACT_KINDS }) => {
      Object.assign(RESULT_ARTIFACTS, {
        poster: {
          ...RESULT_ARTIFACTS.thumbnail,
          jobField: 'posterUrl',
          eventField: 'posterUrl',
          openapi: {
            job: {
              type: 'string',
              nullable: true,
              description: 'Poster URL; null until done',
              example: 'http://localhost:3000/files/p.png',
            },
            event: { type: 'string', nullable: true, description: 'Poster URL', example: 'https://glimpse.example.com/files/p.png' },
            models: [],
            example: null,
          },
        },
      });
      ARTIFACT_KINDS.push('poster' as never);
    });
    const schemas = await schemasOf(job, event);
    expect(schemas.ScreenshotJobDto.properties.posterUrl).toEqual({
      type: 'string',
      nullable: true,
      description: 'Poster URL; null until done',
      example: 'http://localhost:3000/files/p.png',
    });
    expect(schemas.ScreenshotJobDto.required).toContain('posterUrl');
    expect(schemas.ScreenshotCompletedDataDto.properties.posterUrl).toMatchObject({ type: 'string', description: 'Poster URL' });
    // The others are still there, and the models they refer to are known.
    expect(Object.keys(schemas.ScreenshotJobDto.properties)).toEqual(
      expect.arrayContaining(['url', 'thumbnailUrl', 'extracted', 'storage', 'id']),
    );
    expect(Object.keys(schemas)).toEqual(expect.arrayContaining(['ExtractedDto', 'StoredObjectDto']));
  });
});
