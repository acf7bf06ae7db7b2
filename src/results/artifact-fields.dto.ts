import { ApiExtraModels, ApiProperty } from '@nestjs/swagger';
import { artifactEntries, ArtifactEventFields, ArtifactJobFields } from './artifacts';

/**
 * A base class whose OpenAPI properties are the artifacts' fields on `side` (the job's, or
 * `screenshot.completed`'s), each with the schema its entry of the artifacts table declares
 * (src/results/artifacts.ts, `openapi`), and the models those schemas refer to as extra models.
 * Documentation only: the class has no runtime fields.
 */
function artifactFieldsDto<F>(side: 'job' | 'event'): abstract new () => F {
  abstract class ArtifactFields {}
  const models = new Set<abstract new () => unknown>();
  for (const [, a] of artifactEntries()) {
    const field = side === 'job' ? a.jobField : a.eventField;
    const schema = side === 'job' ? a.openapi.job : a.openapi.event;
    if (!field || !schema) continue;
    ApiProperty(schema)(ArtifactFields.prototype, field);
    for (const model of a.openapi.models) models.add(model);
  }
  ApiExtraModels(...(models as Set<new () => unknown>))(ArtifactFields);
  return ArtifactFields as unknown as abstract new () => F;
}

/** The job's artifact fields (`url`, `thumbnailUrl`, `extracted`, `storage`, …): the base of the job DTO. */
export const ArtifactJobFieldsDto = artifactFieldsDto<ArtifactJobFields>('job');

/** `screenshot.completed`'s artifact fields (`publicUrl`, `thumbnailUrl`, `extracted`, …): the base of its data DTO. */
export const ArtifactEventFieldsDto = artifactFieldsDto<ArtifactEventFields>('event');
