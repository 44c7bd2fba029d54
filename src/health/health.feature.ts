import { defineFeature } from '../common/feature/feature.js';
import { HealthModule } from './health.module.js';

/** The health feature: what it contributes to the application, the database, the CLI and the tests. */
export const HEALTH_FEATURE = defineFeature({
  name: 'health',
  modules: [HealthModule],
  settings: ['SHUTDOWN_TIMEOUT_MS', 'SHUTDOWN_DELAY_MS'],
});
