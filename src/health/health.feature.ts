import { defineFeature } from '../common/feature/feature.js';
import { HEALTH_SETTINGS } from './health.settings.js';

/** The health feature: what it contributes to the application, the database, the CLI and the tests. */
export const HEALTH_FEATURE = defineFeature({
  name: 'health',
  load: async () => ({
    modules: [(await import('./health.module.js')).HealthModule],
  }),
  settings: HEALTH_SETTINGS,
});
