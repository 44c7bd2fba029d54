import { defineFeature } from '../common/feature/feature.js';
import { ReplayModule } from './replay.module.js';

/** The replay feature: what it contributes to the application, the database, the CLI and the tests. */
export const REPLAY_FEATURE = defineFeature({
  name: 'replay',
  modules: [ReplayModule],
});
