import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DataSource } from 'typeorm';
import { loadServiceFeatures } from '../../src/features.js';
import { typeormOptions } from '../../src/database/typeorm-options.js';
import { cloneTemplate, dropDatabase } from '../support/test-database.js';

interface PgClient {
  listenerCount(event: string): number;
  emit(event: string, error: Error): boolean;
  query(text: string): Promise<{ rows: { ok: number }[] }>;
}
interface PgPool {
  connect(): Promise<PgClient & { release(err?: unknown): void }>;
}

describe("the pool's connections and their errors", () => {
  let db: { name: string; url: string };
  let source: DataSource;

  beforeAll(async () => {
    db = await cloneTemplate();
    source = await new DataSource(
      typeormOptions({ url: db.url, poolSize: 2, features: await loadServiceFeatures() }),
    ).initialize();
  });

  afterAll(async () => {
    await source?.destroy();
    if (db) await dropDatabase(db.name);
  });

  it('a checked-out connection has a listener of its own: an error nobody else hears does not end the process', async () => {
    const pool = (source.driver as unknown as { master: PgPool }).master;
    const client = await pool.connect();
    try {
      // The pool's idle listener is off while the connection is checked out; ours stays.
      expect(client.listenerCount('error')).toBeGreaterThanOrEqual(1);
      // Without a listener, EventEmitter would throw this error out of emit (the process's end in a service).
      expect(() => client.emit('error', new Error('Connection terminated unexpectedly'))).not.toThrow();
    } finally {
      client.release(new Error('dropped by the test'));
    }
    expect((await source.query('SELECT 1 AS ok'))[0].ok).toBe(1);
  });
});
