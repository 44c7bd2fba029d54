import { defineFeature } from '../common/feature/feature.js';
import { fixtureSnapshotEvent } from '../session-recordings/session-recordings.feature.js';

/**
 * Recording capture (`POST /s/`): the route of PostHog's recording capture, whose body the ingestion engine
 * decodes (src/ingest); what it contributes to the application and the tests.
 */
export const CAPTURE_FEATURE = defineFeature({
  name: 'capture',
  e2e: [
    'capture',
    'capture-budget-readiness',
    'capture-budget-release-process',
    'capture-contention',
    'capture-early-answers',
    'capture-edge-cases',
    'capture-limits',
    'capture-memory-process',
    'capture-process',
    'capture-refused-under-pressure',
    'browser-recording',
  ],
  load: async () => ({
    modules: [(await import('./capture.module.js')).CaptureModule],
  }),
  testFixture: {
    bodies: {
      CaptureController_captureSnapshots: ({ apiToken, now }) => [
        fixtureSnapshotEvent(apiToken, now, 'fuzz'),
      ],
    },
  },
});
