import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { DataSource } from 'typeorm';
import { scratchDataSource } from '../support/scratch-data-source.js';

interface PgClient {
  listenerCount(event: string): number;
  emit(event: string, error: Error): boolean;
  query(text: string): Promise<{ rows: { ok: number }[] }>;
}
interface PgPool {
  connect(): Promise<PgClient & { release(err?: unknown): void }>;
}

describe("the pool's connections and their errors", () => {
  let scratch: Awaited<ReturnType<typeof scratchDataSource>>;
  let source: DataSource;

  beforeAll(async () => {
    scratch = await scratchDataSource();
    source = scratch.dataSource;
  });

  afterAll(async () => {
    await scratch?.close();
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
