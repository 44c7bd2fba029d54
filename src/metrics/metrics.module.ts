import { Global, Module } from '@nestjs/common';
import { MetricsServer } from './metrics.server.js';
import { MetricsService } from './metrics.service.js';

/** Prometheus metrics: the registry every module records into (global) and the server on METRICS_PORT. */
@Global()
@Module({ providers: [MetricsService, MetricsServer], exports: [MetricsService] })
export class MetricsModule {}
