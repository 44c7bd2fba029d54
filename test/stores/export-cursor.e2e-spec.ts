/**
 * The conformance suite of the export cursor (src/stores/export-cursor.ts): every implementation listed in
 * EXPORT_CURSORS passes the same tests. What each write's position is read by is the events store's suite
 * (events-store.e2e-spec.ts, "committed late"); here, the cursor's own rules.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import type { ExportCursor } from '../../src/stores/export-cursor.js';
import { createEmptyDatabase, dropDatabase } from '../support/test-database.js';
import { EXPORT_CURSORS } from './implementations.js';

describe.each(EXPORT_CURSORS)('export cursor conformance: $name', (implementation) => {
  const cursor: ExportCursor = implementation.of(undefined as never);
  let database: { name: string; url: string };
  const clients: pg.Client[] = [];
  const connect = async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    clients.push(client);
    return client;
  };
  const horizon = async (client: pg.Client) =>
    (await client.query<{ h: string }>(`SELECT ${cursor.horizonSql}::text AS h`)).rows[0].h;
  const write = async (client: pg.Client) => {
    await client.query('BEGIN');
    await client.query('CREATE TEMP TABLE IF NOT EXISTS w (x int) ON COMMIT DROP');
    await client.query('INSERT INTO w VALUES (1)');
  };

  beforeAll(async () => {
    database = await createEmptyDatabase('cursor');
  });
  afterAll(async () => {
    for (const client of clients) await client.end().catch(() => undefined);
    if (database) await dropDatabase(database.name);
  });

  it('serializes its horizon as a cursor of its own, ordered by compare', async () => {
    const reader = await connect();
    const a = await horizon(reader);
    expect(cursor.isCursor(a)).toBe(true);
    expect(cursor.isCursor('not a cursor')).toBe(false);
    expect(cursor.compare(a, a)).toBe(0);
    const writer = await connect();
    await write(writer);
    await writer.query('COMMIT');
    const b = await horizon(reader);
    expect(cursor.compare(a, b)).toBeLessThan(0);
    expect(cursor.compare(b, a)).toBeGreaterThan(0);
  });

  it('never passes a write still open, never goes back, and passes it once committed', async () => {
    const reader = await connect();
    const holder = await connect();
    await write(holder);
    // The open write's own position (its transaction id, as the cursor writes one).
    const open = (await holder.query<{ x: string }>('SELECT pg_current_xact_id()::text AS x')).rows[0].x;
    const held = await horizon(reader);
    expect(cursor.compare(held, open)).toBeLessThanOrEqual(0);
    // Later writes commit: the horizon does not pass the open one (it may still rise to it: another transaction
    // of the database, an autovacuum's ANALYZE, may have been open below it and ended meanwhile).
    const writer = await connect();
    for (let i = 0; i < 3; i++) {
      await write(writer);
      await writer.query('COMMIT');
    }
    const still = await horizon(reader);
    expect(cursor.compare(still, open)).toBeLessThanOrEqual(0);
    expect(cursor.compare(still, held)).toBeGreaterThanOrEqual(0);
    await holder.query('COMMIT');
    const after = await horizon(reader);
    expect(cursor.compare(after, open)).toBeGreaterThan(0);
    expect(cursor.compare(after, still)).toBeGreaterThan(0);
  });
});
