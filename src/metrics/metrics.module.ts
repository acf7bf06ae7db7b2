import { Global, Module } from '@nestjs/common';
import { HttpObservability } from './http-observability';
import { Metrics } from './metrics';
import { MetricsController } from './metrics.controller';
import { MetricsEndpoint } from './metrics-endpoint';
import { ServiceQueues } from './queue-metrics';

/** Prometheus metrics: the instruments (global, so any module records), `/metrics`, the HTTP middleware. */
@Global()
@Module({
  controllers: [MetricsController],
  providers: [Metrics, MetricsEndpoint, ServiceQueues, HttpObservability],
  exports: [Metrics, MetricsEndpoint, ServiceQueues, HttpObservability],
})
export class MetricsModule {}
