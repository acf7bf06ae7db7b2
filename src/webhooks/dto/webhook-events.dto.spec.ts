import 'reflect-metadata';
import { EVENT_TYPES } from '../../events/event-types';
import { envelopeSchemaName, ScreenshotCompletedDataDto, WEBHOOK_EVENT_SCHEMAS } from './webhook-events.dto';

/** @nestjs/swagger's metadata keys of a class's documented properties. */
const DECORATORS = { API_MODEL_PROPERTIES: 'swagger/apiModelProperties', API_MODEL_PROPERTIES_ARRAY: 'swagger/apiModelPropertiesArray' };

/** The swagger property metadata of a class: its property names in order, and one property's options. */
function propertiesOf(cls: object): string[] {
  return (Reflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES_ARRAY, (cls as { prototype: object }).prototype) as string[]).map((p) =>
    p.replace(/^:/, ''),
  );
}
function propertyOf(cls: object, name: string): { enum?: unknown[]; type?: unknown } {
  return Reflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES, (cls as { prototype: object }).prototype, name) as {
    enum?: unknown[];
    type?: unknown;
  };
}

describe('webhook event envelopes (derived from the event map)', () => {
  it('names each envelope schema after its type, as the OpenAPI document always did', () => {
    expect(EVENT_TYPES.map(envelopeSchemaName)).toEqual([
      'ScreenshotCompletedEventDto',
      'ScreenshotFailedEventDto',
      'RunCompletedEventDto',
      'RunFailedEventDto',
      'QuotaWarningEventDto',
      'TestPingEventDto',
      'EndpointDisabledEventDto',
      'MonitorChangedEventDto',
      'MonitorFailedEventDto',
      'CrawlCompletedEventDto',
      'CrawlFailedEventDto',
      'ProfileExpiredEventDto',
    ]);
    for (const type of EVENT_TYPES) expect(WEBHOOK_EVENT_SCHEMAS[type].name).toBe(envelopeSchemaName(type));
  });

  it('gives every envelope id, createdAt, its one type and its data class, in that order', () => {
    for (const type of EVENT_TYPES) {
      const envelope = WEBHOOK_EVENT_SCHEMAS[type];
      expect(propertiesOf(envelope)).toEqual(['id', 'createdAt', 'type', 'data']);
      expect(propertyOf(envelope, 'type').enum).toEqual([type]);
    }
    expect(propertyOf(WEBHOOK_EVENT_SCHEMAS['screenshot.completed'], 'data').type).toBe(ScreenshotCompletedDataDto);
    // One envelope per type, each its own class.
    expect(new Set(Object.values(WEBHOOK_EVENT_SCHEMAS)).size).toBe(EVENT_TYPES.length);
  });
});
