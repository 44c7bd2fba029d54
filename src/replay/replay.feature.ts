import { defineFeature } from '../common/feature/feature.js';

/** The replay feature: what it contributes to the application, the database, the CLI and the tests. */
export const REPLAY_FEATURE = defineFeature({
  name: 'replay',
  load: async () => ({
    modules: [(await import('./replay.module.js')).ReplayModule],
  }),
});
