import { defineFeature } from '../common/feature/feature.js';
import { INGEST_SETTINGS } from './ingest.settings.js';

/**
 * The ingestion engine (PostHog's capture protocol and the pipeline to the features' sinks): its module and its
 * settings. It serves no route itself: the capture routes are the features' (`/s/`: capture; `/e/`, `/batch/`, …:
 * events), and what is stored is the sinks' (`sinks` of the events and session recordings manifests).
 */
export const INGEST_FEATURE = defineFeature({
  name: 'ingest',
  e2e: ['ingest-sinks'],
  load: async () => ({
    modules: [(await import('./ingest.module.js')).IngestModule],
  }),
  settings: INGEST_SETTINGS,
});
