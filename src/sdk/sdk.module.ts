import { Module } from '@nestjs/common';
import { ProjectsModule } from '../projects/projects.module.js';
import { FlagDefinitionsController } from './flag-definitions.controller.js';
import { SdkAssets } from './sdk-assets.js';
import { SdkAssetsController } from './sdk-assets.controller.js';
import { AnalyticsRefusalController, SdkController } from './sdk.controller.js';
import { SdkService } from './sdk.service.js';

/**
 * What the browser SDK needs from the service besides capture (`POST /s/`, the session recordings module):
 * remote config, flags endpoints, its recorder script, and explicit refusals of the analytics endpoints; and
 * the server SDKs' feature flag definitions poll (personal API key).
 * CORS for these paths: `sdkCors`, mounted by `configureApp`.
 */
@Module({
  imports: [ProjectsModule],
  controllers: [SdkController, SdkAssetsController, FlagDefinitionsController, AnalyticsRefusalController],
  providers: [SdkService, { provide: SdkAssets, useFactory: () => new SdkAssets() }],
})
export class SdkModule {}
