import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { SqlFixture } from '../../src/database/generate-sql.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { createSqlFixture, generatedSqlCalls, statementRecorder } from '../support/generated-sql.js';
import { rr, snapshotEvent } from '../support/recordings.js';
import { onCitus } from '../support/test-database.js';

/**
 * No statement of a request path fans out to every shard (issue 38, item 4). The statements pinned in test/sql
 * (every `@GenerateSql` repository method: the hot and hand-tuned ones) are run on the Citus cluster with their
 * examples, then planned with EXPLAIN and the same parameters: a statement over distributed tables must plan as
 * one task (Citus's router: every distributed table restricted to the one project). The statements that may
 * reach every shard, or that Citus refuses, are listed below with their reason; the list holds only what is true.
 * Then every statement of requests to the hot routes (HOT_ROUTES: capture, the events, persons and recordings
 * reads), pinned or not, is planned the same way and must be one task. Skipped, in one line, off Citus.
 */
const citus = onCitus();
if (!citus) {
  process.stderr.write(
    'citus-routing.spec: the test server is not a Citus coordinator, so the Citus stage is skipped (npm run citus:up, then TEST_DATABASE_URL at it)\n',
  );
}

/** Methods whose statements may plan as several tasks: not on a request path, or over every project by design. */
const FANS_OUT: Record<string, string> = {
  'SnapshotStorageRepository.chunksToMove':
    'the snapshot storage maintenance and packer (background, over every project: packing, moving chunks between the database and the object store, counts for the CLI)',
  'SnapshotStorageRepository.chunkData':
    'the snapshot storage maintenance and packer (background, over every project: packing, moving chunks between the database and the object store, counts for the CLI)',
  'SnapshotStorageRepository.movedToObject':
    'the snapshot storage maintenance and packer (background, over every project: packing, moving chunks between the database and the object store, counts for the CLI)',
  'SnapshotStorageRepository.movedToDatabase':
    'the snapshot storage maintenance and packer (background, over every project: packing, moving chunks between the database and the object store, counts for the CLI)',
  'SnapshotStorageRepository.counts':
    'the snapshot storage maintenance and packer (background, over every project: packing, moving chunks between the database and the object store, counts for the CLI)',
  'SnapshotStorageRepository.referencedKeys':
    'the snapshot storage maintenance and packer (background, over every project: packing, moving chunks between the database and the object store, counts for the CLI)',
  'SnapshotStorageRepository.backlog':
    'the snapshot storage maintenance and packer (background, over every project: packing, moving chunks between the database and the object store, counts for the CLI)',
  'SnapshotStorageRepository.unpackedChunks':
    'the snapshot storage maintenance and packer (background, over every project: packing, moving chunks between the database and the object store, counts for the CLI)',
  'SnapshotStorageRepository.dropWaiting':
    'the snapshot storage maintenance and packer (background, over every project: packing, moving chunks between the database and the object store, counts for the CLI)',
  'SnapshotStorageRepository.chunksToPack':
    'the snapshot storage maintenance and packer (background, over every project: packing, moving chunks between the database and the object store, counts for the CLI)',
  'SnapshotStorageRepository.countNotPacked':
    'the snapshot storage maintenance and packer (background, over every project: packing, moving chunks between the database and the object store, counts for the CLI)',
  'SnapshotStorageRepository.movedToPacked':
    'the snapshot storage maintenance and packer (background, over every project: packing, moving chunks between the database and the object store, counts for the CLI)',
  'SnapshotStorageRepository.unbuffer':
    'the snapshot storage maintenance and packer (background, over every project: packing, moving chunks between the database and the object store, counts for the CLI)',
};

/**
 * Requests of the hot routes whose every statement is planned too (statements not pinned in test/sql included:
 * the ORM's, the access checks', the activity log's), as a client sends them. `{p}` is the project, `{s}` a recording.
 */
/** GET with the owner's key; with a body, a POST of the capture API (the project's token in the body). */
const HOT_ROUTES: { path: string; body?: (token: string) => unknown }[] = [
  {
    path: '/batch/',
    body: (token) => ({
      api_key: token,
      batch: [{ event: 'clicked', distinct_id: 'route-user', timestamp: new Date().toISOString() }],
    }),
  },
  {
    path: '/s/',
    body: (token) => [
      snapshotEvent({
        token,
        sessionId: 'route-session',
        distinctId: 'route-user',
        events: [rr.meta(Date.now(), 'https://example.com/')],
      }),
    ],
  },
  { path: '/api/projects/{p}/events?limit=50' },
  { path: '/api/projects/{p}/events?event=viewed&distinct_id=route-user' },
  { path: '/api/projects/{p}/persons' },
  { path: '/api/projects/{p}/persons?distinct_id=route-user' },
  { path: '/api/projects/{p}/session_recordings' },
  { path: '/api/projects/{p}/session_recordings/{s}' },
  { path: '/api/projects/{p}/session_recordings/{s}/snapshots' },
];

/** Methods Citus refuses to run as written, with what would fix them. */
const FAILS_ON_CITUS: Record<string, string> = {};

/** Statements EXPLAIN can plan (not SET, DECLARE, COPY, DDL, locks or savepoints). */
const PLANNABLE = /^\s*(SELECT|WITH|INSERT|UPDATE|DELETE)\b/i;

/** The most tasks of any Citus scan of a plan (`Task Count: N`); 0 when no distributed table is read. */
export function maxTaskCount(plan: string): number {
  return Math.max(0, ...[...plan.matchAll(/Task Count: (\d+)/g)].map((m) => Number(m[1])));
}

(citus ? describe : describe.skip)(
  `statements of the request paths on a Citus cluster${citus ? '' : ' (skipped: not a Citus coordinator)'}`,
  () => {
    let t: TestApp;
    let fixture: SqlFixture;
    let statementsOf: ReturnType<typeof statementRecorder>['statementsOf'];

    beforeAll(async () => {
      t = await createTestApp();
      fixture = await createSqlFixture(t);
      ({ statementsOf } = statementRecorder(t));
    }, 120_000);

    afterAll(async () => {
      await t?.close();
    });

    it('plans every pinned statement as one task, but for the listed methods', async () => {
      const fanning = new Map<string, string>();
      const failing = new Map<string, string>();
      for (const calls of generatedSqlCalls(t, fixture).values()) {
        for (const call of calls) {
          const key = `${call.className}.${call.method}`;
          let statements;
          try {
            statements = await statementsOf(call.run);
          } catch (error) {
            failing.set(key, (error as Error).message);
            continue;
          }
          for (const { sql, params } of statements.filter((s) => PLANNABLE.test(s.sql))) {
            let rows: { 'QUERY PLAN': string }[];
            try {
              rows = (await t.dataSource.query(`EXPLAIN (COSTS OFF) ${sql}`, params)) as typeof rows;
            } catch (error) {
              failing.set(key, `EXPLAIN: ${(error as Error).message}`);
              continue;
            }
            const tasks = maxTaskCount(rows.map((r) => r['QUERY PLAN']).join('\n'));
            if (tasks > 1) fanning.set(key, `${tasks} tasks: ${sql.trim().split('\n')[0].slice(0, 120)}`);
          }
        }
      }
      const unexpected = (found: Map<string, string>, listed: Record<string, string>) =>
        [...found].filter(([key]) => !(key in listed)).map(([key, why]) => `${key}: ${why}`);
      expect({ fansOut: unexpected(fanning, FANS_OUT), fails: unexpected(failing, FAILS_ON_CITUS) }).toEqual({
        fansOut: [],
        fails: [],
      });
      // The lists hold only what is still true.
      expect({
        fansOut: Object.keys(FANS_OUT).filter((key) => !fanning.has(key)),
        fails: Object.keys(FAILS_ON_CITUS).filter((key) => !failing.has(key)),
      }).toEqual({ fansOut: [], fails: [] });
    }, 300_000);

    it("plans every statement of the hot routes' requests as one task", async () => {
      const owner = await t.factories.user({ email: 'routes-owner@example.com' });
      const organization = await t.factories.organization(owner, 'Routes');
      const [project] = (organization as unknown as { teams: { id: number; api_token: string }[] }).teams;
      const sessionId = 'route-session';
      const at = Date.now();
      await t.http
        .post('/batch/')
        .send({
          api_key: project.api_token,
          batch: [{ event: 'viewed', distinct_id: 'route-user', timestamp: new Date(at).toISOString() }],
        })
        .expect(200);
      await t.http
        .post('/s/')
        .send([
          snapshotEvent({
            token: project.api_token,
            sessionId,
            distinctId: 'route-user',
            events: [rr.meta(at, 'https://example.com/')],
          }),
        ])
        .expect(200);
      // Every statement the requests send, as TypeORM's logger sees them.
      const recorded: { sql: string; params: unknown[] }[] = [];
      const logger = t.dataSource.logger;
      const logQuery = logger.logQuery.bind(logger);
      logger.logQuery = (query, parameters, runner) => {
        recorded.push({ sql: query, params: Array.isArray(parameters) ? parameters : [] });
        return logQuery(query, parameters, runner);
      };
      const fanning: string[] = [];
      try {
        for (const route of HOT_ROUTES) {
          const path = route.path.replace('{p}', String(project.id)).replace('{s}', sessionId);
          recorded.length = 0;
          const res = route.body
            ? await t.http.post(path).send(route.body(project.api_token) as object)
            : await t.http.get(path).set(owner.auth);
          expect([path, res.status]).toEqual([path, 200]);
          const statements = recorded.filter((r) => PLANNABLE.test(r.sql));
          expect([path, statements.length > 0]).toEqual([path, true]);
          for (const { sql, params } of statements) {
            const rows = (await t.dataSource.query(`EXPLAIN (COSTS OFF) ${sql}`, params)) as {
              'QUERY PLAN': string;
            }[];
            const tasks = maxTaskCount(rows.map((r) => r['QUERY PLAN']).join('\n'));
            if (tasks > 1)
              fanning.push(`${path}: ${tasks} tasks: ${sql.trim().split('\n')[0].slice(0, 160)}`);
          }
        }
      } finally {
        logger.logQuery = logQuery;
      }
      expect(fanning).toEqual([]);
    }, 120_000);
  },
);
