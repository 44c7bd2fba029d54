import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Logger, QueryRunner } from 'typeorm';
import { MembershipLevel } from '../../src/common/vocabulary/membership-level.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';

/**
 * What the activity log costs a write (docs/security.md, "Activity log"): exactly one INSERT in the write's one
 * transaction — no SAVEPOINT/RELEASE for the transactions the write's code opens inside it, no second
 * transaction, no read for the log's sake beyond that INSERT (the changes are captured by the write's own
 * statements). The statements are those TypeORM's logger sees, grouped by the connection that sent them.
 */
describe('activity log statements', () => {
  let t: TestApp;
  let owner: TestUser;
  let member: TestUser;
  let orgId: string;
  let recording: { sql: string; runner: QueryRunner | undefined }[] | null = null;

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    member = await t.factories.user();
    orgId = (await t.factories.organization(owner, 'Statements org')).id;
    await t.factories.member(orgId, member, MembershipLevel.MEMBER);
    const original = t.dataSource.logger;
    const recorder: Logger = {
      ...original,
      logQuery: (query: string, _parameters?: unknown[], runner?: QueryRunner) => {
        recording?.push({ sql: query.trim().replace(/\s+/g, ' '), runner });
      },
      logQueryError: () => undefined,
      logQuerySlow: () => undefined,
    };
    t.dataSource.logger = recorder;
  }, 60000);

  afterAll(async () => {
    await t?.close();
  });

  /** The statements of the one connection that opened a transaction while `write` ran, in order. */
  async function transactionOf(write: () => Promise<unknown>): Promise<string[]> {
    const all: { sql: string; runner: QueryRunner | undefined }[] = [];
    recording = all;
    try {
      await write();
    } finally {
      recording = null;
    }
    const opened = all.filter((s) => /^START TRANSACTION/i.test(s.sql));
    expect(opened).toHaveLength(1);
    return all.filter((s) => s.runner === opened[0].runner).map((s) => s.sql);
  }

  /** One transaction, no savepoints, one INSERT into the log. */
  function expectOneInsert(statements: string[]): void {
    const control = statements.filter((s) =>
      /^(START TRANSACTION|BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)/i.test(s),
    );
    expect(control).toEqual(['START TRANSACTION', 'COMMIT']);
    const inserts = statements.filter((s) => /^INSERT INTO activity_logs/i.test(s));
    expect(inserts).toHaveLength(1);
    expect(statements[0]).toBe('START TRANSACTION');
    // Nothing reads the log's tables or the changes for the log's sake but that INSERT.
    expect(statements.filter((s) => /activity/i.test(s))).toEqual(inserts);
  }

  it('organization PATCH: its statements in one transaction, plus one INSERT', async () => {
    const statements = await transactionOf(() =>
      t.http.patch(`/api/organizations/${orgId}`).set(owner.auth).send({ name: 'Renamed' }).expect(200),
    );
    expectOneInsert(statements);
    expect(statements.filter((s) => /^UPDATE "?organizations"?/i.test(s))).toHaveLength(1);
  });

  it('invite creation (a service with its own transaction): one INSERT more, no savepoint', async () => {
    const statements = await transactionOf(() =>
      t.http
        .post(`/api/organizations/${orgId}/invites`)
        .set(owner.auth)
        .send({ target_email: 'counted@example.com', send_email: false })
        .expect(201),
    );
    expectOneInsert(statements);
  });

  it('member level change (a transaction inside the request’s): joined, no SAVEPOINT/RELEASE', async () => {
    const statements = await transactionOf(() =>
      t.http
        .patch(`/api/organizations/${orgId}/members/${member.uuid}`)
        .set(owner.auth)
        .send({ level: MembershipLevel.ADMIN })
        .expect(200),
    );
    expectOneInsert(statements);
  });

  it('role creation (one statement of its own): BEGIN and COMMIT around it and the INSERT', async () => {
    const statements = await transactionOf(() =>
      t.http.post(`/api/organizations/${orgId}/roles`).set(owner.auth).send({ name: 'Counted' }).expect(201),
    );
    expectOneInsert(statements);
    expect(statements.filter((s) => /^INSERT INTO "?roles"?/i.test(s))).toHaveLength(1);
  });
});
