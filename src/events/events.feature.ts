import { randomUUID } from 'node:crypto';
import { defineFeature, fixtureText } from '../common/feature/feature.js';
import { EVENTS_SETTINGS } from './events.settings.js';

declare module '../common/auth/scopes.js' {
  interface ScopeObjects {
    query: true;
  }
}

/**
 * The analytics events feature (capture of the SDK's events, day-partitioned storage, persons from events, the
 * events API): what it contributes to the application, the database, the CLI and the tests.
 */
export const EVENTS_FEATURE = defineFeature({
  name: 'events',
  e2e: [
    'events',
    'events-deadline',
    'events-hostile-process',
    'events-lock-wait',
    'events-partitions-bound',
    'events-read-bounds',
    'browser-events',
  ],
  load: async () => ({
    // What batch exports can export of it (src/stores/export-model.ts).
    exportModels: [(await import('./events-export.js')).EVENTS_MODEL],
    modules: [(await import('./events.module.js')).EventsModule],
    stores: [(await import('./events-store.module.js')).EventsStoreModule],
    // `events` is a partitioned table, which TypeORM does not model: no entity (docs/data-access.md).
    migrations: [
      (await import('./migrations/1795810600000-Events.js')).Events1795810600000,
      (await import('./migrations/1795910000000-EventsExportIndexes.js')).EventsExportIndexes1795910000000,
      // `projects.ingested_event`, which the events' insert sets.
      (await import('./migrations/1795927270000-IngestedEvent.js')).IngestedEvent1795927270000,
      (await import('./migrations/1795930000000-EventsNameSessionIndex.js'))
        .EventsNameSessionIndex1795930000000,
    ],
  }),
  scopes: ['query'],
  // Every event but `$snapshot` of the analytics capture routes; first, so the recordings of the same request see
  // the persons its `$identify` merged.
  sinks: [
    {
      name: 'events',
      order: 10,
      handler: async () => (await import('./events-ingestion.service.js')).EventsIngestionService,
    },
  ],
  settings: EVENTS_SETTINGS,
  testFixture: {
    // An event captured through /e/ with a known uuid: the path's {id} of `…/events/{id}`.
    async create({ request, apiToken, now }) {
      const uuid = randomUUID();
      await request(
        'post',
        '/e/',
        {
          api_key: apiToken,
          event: 'fixture event',
          uuid,
          distinct_id: fixtureText('events-'),
          timestamp: now.toISOString(),
        },
        { public: true },
      );
      return { events: uuid };
    },
  },
  tasks: [
    {
      name: 'event-partitions',
      interval: 'EVENTS_PURGE_INTERVAL_SECONDS',
      description:
        'Creates the day partitions of `events` ahead (EVENTS_PARTITIONS_AHEAD_DAYS), drops or purges expired ones and, on Citus with EVENTS_COLUMNAR_AFTER_DAYS, converts old ones to `columnar`; also once at boot.',
      handler: async () => (await import('./event-partitions.scheduler.js')).EventPartitionsScheduler,
      atBoot: true,
    },
  ],
});
