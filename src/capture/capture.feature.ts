import { defineFeature } from '../common/feature/feature.js';
import { DEMO_COMMAND } from './capture.cli.js';

/** The capture feature: what it contributes to the application, the database, the CLI and the tests. */
export const CAPTURE_FEATURE = defineFeature({
  name: 'capture',
  load: async () => ({
    modules: [(await import('./capture.module.js')).CaptureModule],
  }),
  settings: [
    'RECORDING_BODY_LIMIT',
    'CAPTURE_MAX_EVENTS',
    'CAPTURE_MAX_SNAPSHOT_EVENTS',
    'CAPTURE_MAX_SESSIONS',
    'CAPTURE_MEMORY_BUDGET',
    'PUBLIC_JSON_MAX_KEYS',
  ],
  cli: [DEMO_COMMAND],
});
