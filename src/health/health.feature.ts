import { defineFeature } from '../common/feature/feature.js';

/** The health feature: what it contributes to the application, the database, the CLI and the tests. */
export const HEALTH_FEATURE = defineFeature({
  name: 'health',
  load: async () => ({
    modules: [(await import('./health.module.js')).HealthModule],
  }),
  settings: ['SHUTDOWN_TIMEOUT_MS', 'SHUTDOWN_DELAY_MS'],
});
