import { defineFeature } from '../common/feature/feature.js';
import { CaptureModule } from './capture.module.js';

/** The capture feature: what it contributes to the application, the database, the CLI and the tests. */
export const CAPTURE_FEATURE = defineFeature({
  name: 'capture',
  modules: [CaptureModule],
  settings: [
    'RECORDING_BODY_LIMIT',
    'CAPTURE_MAX_EVENTS',
    'CAPTURE_MAX_SNAPSHOT_EVENTS',
    'CAPTURE_MEMORY_BUDGET',
  ],
});
