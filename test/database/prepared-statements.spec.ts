import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { DataSource, QueryFailedError } from 'typeorm';
import { prepared, preparesStatements, setPreparedStatements } from '../../src/database/prepared-sql.js';
import { ORGANIZATION_NOT_ALLOWED } from '../../src/memberships/memberships.service.js';
import { RepositoryBase } from '../../src/database/repository-base.js';
import { TransactionHost } from '../../src/database/transactions.js';
import { createTestApp } from '../support/create-test-app.js';
import { type ScratchDataSource, scratchDataSource } from '../support/scratch-data-source.js';

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
  let scratch: ScratchDataSource;
  let preparing: DataSource;
  let plain: DataSource;

  beforeAll(async () => {
    scratch = await scratchDataSource(1);
    preparing = scratch.dataSource;
    setPreparedStatements(preparing, true);
    plain = await scratch.open({ poolSize: 1 });
    await preparing.query('CREATE TABLE prepared_notes (id int PRIMARY KEY, label text NOT NULL)');
    await preparing.query("INSERT INTO prepared_notes VALUES (1, 'one'), (2, 'two')");
  });

  afterAll(async () => {
    await scratch?.close();
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
    await plain.query("UPDATE prepared_notes SET label = 'un' WHERE id = 1");
    expect(await notes.byId(1)).toEqual({ id: 1, label: 'un' });
    await plain.query('ALTER TABLE prepared_notes ALTER COLUMN label TYPE varchar(20)');
    const failure = await notes.byId(1).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(QueryFailedError);
    expect((failure as QueryFailedError & { driverError: { code: string } }).driverError.code).toBe('0A000');
    expect(await notes.byId(1)).toEqual({ id: 1, label: 'un' });
    expect(await notes.byIdRows(1)).toEqual({ id: 1, label: 'un' });
  });

  it("the application's data source prepares its marked lookups by default, and none with DATABASE_PREPARED_STATEMENTS=false", async () => {
    // A pool of one connection, so the statements a request sent are those that connection holds.
    const single = { DATABASE_POOL_SIZE: '1', DATABASE_POOL_RESERVE: '0' };
    const on = await createTestApp(single);
    const off = await createTestApp({ ...single, DATABASE_PREPARED_STATEMENTS: 'false' });
    try {
      expect(preparesStatements(on.dataSource)).toBe(true);
      expect(preparesStatements(off.dataSource)).toBe(false);
      const held: Record<string, string[]> = {};
      for (const [side, app] of [
        ['on', on],
        ['off', off],
      ] as const) {
        const user = await app.factories.user();
        const org = await app.factories.organization(user);
        const res = await app.http
          .get(`/api/organizations/${org.id}`)
          .set('Authorization', `Bearer ${user.key}`);
        expect(res.status).toBe(200);
        expect(res.body.id).toBe(org.id);
        const exports = await app.http
          .get(`/api/organizations/${org.id}/batch_exports`)
          .set('Authorization', `Bearer ${user.key}`);
        expect(exports.status).toBe(200);
        const rows: { name: string; statement: string }[] = await app.dataSource.query(
          'SELECT name, statement FROM pg_prepared_statements ORDER BY name',
        );
        for (const row of rows) expect(row.name).toMatch(/^s_[0-9a-f]{24}$/);
        held[side] = rows.map((row) => row.statement.replace(/\s+/g, ' '));
      }
      // The requests' key lookup, the caller's access and the organization's view were each parsed once, named.
      expect(held.on.some((text) => text.includes('FROM personal_api_keys k'))).toBe(true);
      expect(held.on.some((text) => text.includes('FROM organization_memberships m'))).toBe(true);
      expect(held.on.some((text) => text.includes('FROM organizations o'))).toBe(true);
      // The organization-wide list's access (the membership with its projects' rules); the list itself is not.
      expect(held.on.some((text) => text.includes('AS holds_project'))).toBe(true);
      expect(held.on.some((text) => text.includes('FROM batch_exports'))).toBe(false);
      expect(held.off).toEqual([]);
    } finally {
      await on.close();
      await off.close();
    }
  });

  it("a key restricted to another organization's project is refused by the prepared access statement under its generic plan", async () => {
    // One connection, held to generic plans: the organization-wide access statement is planned once for every
    // key, so a restricted key's `$3` must be decided when the plan runs, not when it was made.
    const app = await createTestApp({ DATABASE_POOL_SIZE: '1', DATABASE_POOL_RESERVE: '0' });
    try {
      await app.dataSource.query('SET plan_cache_mode = force_generic_plan');
      const owner = await app.factories.user();
      const mine = await app.factories.organization(owner);
      const other = await app.factories.organization(owner);
      const list = (orgId: string, auth: Record<string, string>) =>
        app.http.get(`/api/organizations/${orgId}/batch_exports`).set(auth);
      // The unrestricted key's requests prepare the statement and plan it with `$3` null.
      for (let i = 0; i < 3; i++) expect((await list(mine.id, owner.auth)).status).toBe(200);
      const elsewhere = await app.factories.keyFor(owner, '*', { projects: [other.teams[0].id] });
      const denied = await list(mine.id, elsewhere);
      expect(denied.status).toBe(403);
      expect(denied.body).toMatchObject({ code: 'permission_denied', detail: ORGANIZATION_NOT_ALLOWED });
      expect((await list(other.id, elsewhere)).status).toBe(200);
      const here = await app.factories.keyFor(owner, '*', { projects: [mine.teams[0].id] });
      expect((await list(mine.id, here)).status).toBe(200);
      expect((await list(other.id, here)).status).toBe(403);
      expect((await list(mine.id, owner.auth)).status).toBe(200);
      // Those answers came from the named statement's generic plan, not from a text planned per request.
      const [access]: { generic_plans: string; custom_plans: string }[] = await app.dataSource.query(
        `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE statement LIKE '%AS holds_project%'`,
      );
      expect(Number(access.generic_plans)).toBeGreaterThanOrEqual(8);
      expect(Number(access.custom_plans)).toBe(0);
    } finally {
      await app.close();
    }
  });
});
