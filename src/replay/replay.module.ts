import { Module } from '@nestjs/common';
import { SessionRecordingsModule } from '../session-recordings/session-recordings.module.js';
import { ReplayAssets } from './replay-assets.js';
import { ReplayController } from './replay.controller.js';

/**
 * Watching recordings in a browser: the share page, the embeddable player and the recordings browser, served with
 * the player bundles built into dist/web.
 */
@Module({
  imports: [SessionRecordingsModule],
  controllers: [ReplayController],
  providers: [{ provide: ReplayAssets, useFactory: () => new ReplayAssets() }],
})
export class ReplayModule {}
