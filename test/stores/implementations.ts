/**
 * The implementations of each store seam that the conformance suites (test/stores/*.e2e-spec.ts) run against:
 * a new implementation proves itself by one line here, and passing the suites.
 */
import type { INestApplication } from '@nestjs/common';
import { EVENTS_STORE, type EventsStore } from '../../src/stores/events-store.js';
import { PERSONS_STORE, type PersonsStore } from '../../src/persons/persons-store.js';
import { type ExportCursor, POSTGRES_EXPORT_CURSOR } from '../../src/stores/export-cursor.js';

export interface Implementation<T> {
  name: string;
  /** The store of a booted application (its configuration chooses the implementation). */
  of(app: INestApplication): T;
}

export const EVENTS_STORES: Implementation<EventsStore>[] = [
  { name: 'postgresql', of: (app) => app.get<EventsStore>(EVENTS_STORE) },
];

export const PERSONS_STORES: Implementation<PersonsStore>[] = [
  { name: 'postgresql', of: (app) => app.get<PersonsStore>(PERSONS_STORE) },
];

export const EXPORT_CURSORS: Implementation<ExportCursor>[] = [
  { name: 'postgres-xid', of: () => POSTGRES_EXPORT_CURSOR },
];
