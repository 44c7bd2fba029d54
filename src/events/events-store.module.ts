import { Global, Module } from '@nestjs/common';
import { EVENTS_STORE } from '../stores/events-store.js';
import { EventPartitionsRepository } from './event-partitions.repository.js';
import { EventsRepository } from './events.repository.js';
import { PostgresEventsStore } from './postgres-events-store.js';

/**
 * Binds the events store seam (EVENTS_STORE, src/stores/events-store.ts) to its PostgreSQL implementation for the
 * whole application: global, because features below the events feature use it too (the recordings list's event
 * filters, the deletion of a person's events), and may not import the events module (it imports them).
 */
@Global()
@Module({
  providers: [
    EventsRepository,
    EventPartitionsRepository,
    PostgresEventsStore,
    { provide: EVENTS_STORE, useExisting: PostgresEventsStore },
  ],
  exports: [EVENTS_STORE, EventsRepository, EventPartitionsRepository],
})
export class EventsStoreModule {}
