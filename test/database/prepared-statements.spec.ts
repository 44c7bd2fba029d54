import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { DataSource, QueryFailedError } from 'typeorm';
import { loadServiceFeatures } from '../../src/features.js';
import { prepared, preparesStatements, setPreparedStatements } from '../../src/database/prepared-sql.js';
import { RepositoryBase } from '../../src/database/repository-base.js';
import { TransactionHost } from '../../src/database/transactions.js';
import { typeormOptions } from '../../src/database/typeorm-options.js';
import { createTestApp } from '../support/create-test-app.js';
import { cloneTemplate, dropDatabase } from '../support/test-database.js';

const BY_ID = prepared('SELECT id, label FROM prepared_notes WHERE id = $1');
const RENAME = prepared('UPDATE prepared_notes SET label = $2 WHERE id = $1');

/** A repository of a scratch table, with lookups marked to be prepared, as the service's hot ones are. */
@Injectable()
class NotesRepository extends RepositoryBase {
  async byId(id: number): Promise<{ id: number; label: string } | undefined> {
    return (await this.query<{ id: number; label: string }>(BY_ID, [id]))[0];
  }

  async byIdRows(id: number): Promise<{ id: number; label: string } | undefined> {
    return (await this.rows<{ id: number; label: string }>(BY_ID, [id]))[0];
  }

  async rename(id: number, label: string): Promise<number> {
    return (await this.modify(RENAME, [id, label])).affected;
  }

  /** The named statements of the connection these statements run on (one connection: a pool of one). */
  async preparedOnConnection(): Promise<{ name: string; statement: string }[]> {
    return this.query('SELECT name, statement FROM pg_prepared_statements ORDER BY name');
  }
}

describe('named prepared statements on a real PostgreSQL (DATABASE_PREPARED_STATEMENTS)', () => {
  let db: { name: string; url: string };
  let preparing: DataSource;
  let plain: DataSource;

  const open = async () =>
    new DataSource(
      typeormOptions({ url: db.url, poolSize: 1, features: await loadServiceFeatures() }),
    ).initialize();

  beforeAll(async () => {
    db = await cloneTemplate();
    preparing = await open();
    setPreparedStatements(preparing, true);
    plain = await open();
    await preparing.query('CREATE TABLE prepared_notes (id int PRIMARY KEY, label text NOT NULL)');
    await preparing.query("INSERT INTO prepared_notes VALUES (1, 'one'), (2, 'two')");
  });

  afterAll(async () => {
    await plain?.destroy();
    await preparing?.destroy();
    if (db) await dropDatabase(db.name);
  });

  it('a marked statement is parsed once per connection and answers as before, in and out of a transaction', async () => {
    const notes = new NotesRepository(preparing);
    expect(await notes.byId(1)).toEqual({ id: 1, label: 'one' });
    expect(await notes.byIdRows(2)).toEqual({ id: 2, label: 'two' });
    await new TransactionHost(preparing).withTransaction(async () => {
      expect(await notes.byId(2)).toEqual({ id: 2, label: 'two' });
      expect(await notes.byIdRows(1)).toEqual({ id: 1, label: 'one' });
      expect(await notes.rename(2, 'deux')).toBe(1);
    });
    expect(await notes.byId(2)).toEqual({ id: 2, label: 'deux' });
    expect(await notes.byId(3)).toBeUndefined();
    expect(await notes.preparedOnConnection()).toEqual(
      [
        { name: BY_ID.name, statement: BY_ID.text },
        { name: RENAME.name, statement: RENAME.text },
      ].sort((a, b) => a.name!.localeCompare(b.name!)),
    );
  });

  it('without the setting, the same statements are sent unnamed: the connection prepares none', async () => {
    const notes = new NotesRepository(plain);
    expect(await notes.byId(1)).toEqual({ id: 1, label: 'one' });
    expect(await notes.byIdRows(1)).toEqual({ id: 1, label: 'one' });
    expect(await notes.rename(1, 'un')).toBe(1);
    expect(await notes.preparedOnConnection()).toEqual([]);
  });

  it('a column type changed under a prepared lookup fails it once, then the text is sent unnamed and answers', async () => {
    const notes = new NotesRepository(preparing);
    expect(await notes.byId(1)).toEqual({ id: 1, label: 'un' });
    await plain.query('ALTER TABLE prepared_notes ALTER COLUMN label TYPE varchar(20)');
    const failure = await notes.byId(1).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(QueryFailedError);
    expect((failure as QueryFailedError & { driverError: { code: string } }).driverError.code).toBe('0A000');
    expect(await notes.byId(1)).toEqual({ id: 1, label: 'un' });
    expect(await notes.byIdRows(1)).toEqual({ id: 1, label: 'un' });
  });

  it("the application's data source prepares by default, and not with DATABASE_PREPARED_STATEMENTS=false", async () => {
    const on = await createTestApp();
    const off = await createTestApp({ DATABASE_PREPARED_STATEMENTS: 'false' });
    try {
      expect(preparesStatements(on.dataSource)).toBe(true);
      expect(preparesStatements(off.dataSource)).toBe(false);
      // The API key lookup is one of the marked statements: an authenticated request on each answers alike.
      for (const app of [on, off]) {
        const user = await app.factories.user();
        const res = await app.http.get('/api/organizations').set('Authorization', `Bearer ${user.key}`);
        expect(res.status).toBe(200);
      }
    } finally {
      await on.close();
      await off.close();
    }
  });
});
