import { defineFeature } from '../common/feature/feature.js';

/** The replay feature: what it contributes to the application, the database, the CLI and the tests. */
export const REPLAY_FEATURE = defineFeature({
  name: 'replay',
  e2e: [
    'replay-browser',
    'replay-events',
    'replay-inspector',
    'replay-layout',
    'replay-pages',
    'replay-player',
    'replay-saved-views',
  ],
  load: async () => ({
    modules: [(await import('./replay.module.js')).ReplayModule],
  }),
});
