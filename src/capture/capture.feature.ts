import { defineFeature } from '../common/feature/feature.js';
import { fixtureSnapshotEvent } from '../session-recordings/session-recordings.feature.js';
import { DEMO_COMMAND } from './capture.cli.js';
import { CAPTURE_SETTINGS } from './capture.settings.js';

/** The capture feature: what it contributes to the application, the database, the CLI and the tests. */
export const CAPTURE_FEATURE = defineFeature({
  name: 'capture',
  load: async () => ({
    modules: [(await import('./capture.module.js')).CaptureModule],
  }),
  settings: CAPTURE_SETTINGS,
  cli: [DEMO_COMMAND],
  testFixture: {
    bodies: {
      CaptureController_captureSnapshots: ({ apiToken, now }) => [
        fixtureSnapshotEvent(apiToken, now, 'fuzz'),
      ],
    },
  },
});
