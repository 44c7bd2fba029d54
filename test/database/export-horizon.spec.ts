import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { DATABASE_HORIZON_SQL } from '../../src/stores/export-cursor.js';
import { createEmptyDatabase, dropDatabase } from '../support/test-database.js';

/**
 * The bound a scheduled run reads transaction ids below (docs/batch-exports.md, "Late commits"): this database's
 * oldest open transaction, whatever another database of the same server holds open.
 */
describe('export horizon (DATABASE_HORIZON_SQL)', () => {
  let here: { name: string; url: string };
  let elsewhere: { name: string; url: string };
  const clients: pg.Client[] = [];

  const connect = async (url: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    clients.push(client);
    return client;
  };
  const horizon = async (client: pg.Client) =>
    BigInt((await client.query<{ xid: string }>(`SELECT ${DATABASE_HORIZON_SQL}::text AS xid`)).rows[0].xid);
  const openTransaction = async (client: pg.Client) => {
    await client.query('BEGIN');
    return BigInt(
      (await client.query<{ xid: string }>('SELECT pg_current_xact_id()::text AS xid')).rows[0].xid,
    );
  };

  beforeAll(async () => {
    here = await createEmptyDatabase('horizon');
    elsewhere = await createEmptyDatabase('horizonother');
  });

  afterAll(async () => {
    for (const client of clients) await client.end().catch(() => undefined);
    if (here) await dropDatabase(here.name);
    if (elsewhere) await dropDatabase(elsewhere.name);
  });

  it('is not held back by a transaction open in another database, and stops at one open in its own', async () => {
    const reader = await connect(here.url);
    const other = await connect(elsewhere.url);
    const otherXid = await openTransaction(other);
    // Something commits after it, here: the horizon passes the other database's open transaction.
    const writer = await connect(here.url);
    const committed = await openTransaction(writer);
    await writer.query('COMMIT');
    const past = await horizon(reader);
    expect(committed).toBeGreaterThan(otherXid);
    expect(past).toBeGreaterThan(committed);
    // The cluster-wide bound is still held at the other database's transaction.
    const clusterXmin = BigInt(
      (await reader.query<{ x: string }>('SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS x')).rows[0]
        .x,
    );
    expect(clusterXmin).toBeLessThanOrEqual(otherXid);

    // A transaction of this database left open stops it at its id, also after later ones commit.
    const holder = await connect(here.url);
    const held = await openTransaction(holder);
    expect(held).toBeGreaterThanOrEqual(past);
    const later = await connect(here.url);
    await openTransaction(later);
    await later.query('COMMIT');
    expect(await horizon(reader)).toBe(held);
    await holder.query('COMMIT');
    const after = await horizon(reader);
    expect(after).toBeGreaterThan(held);
    await other.query('COMMIT');
  });
});
