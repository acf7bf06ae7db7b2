export * from './create-webhook-endpoint.dto';
export * from './webhook-endpoint.dto';
export * from './webhook-delivery.dto';
export * from './webhook-events.dto';
