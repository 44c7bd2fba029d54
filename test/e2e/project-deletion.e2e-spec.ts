import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { DataSource } from 'typeorm';
import { ProjectDeletionService } from '../../src/projects/deletion/project-deletion.service.js';
import { createTenant, type Tenant } from '../support/api-fixtures.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { newSessionId, rr, snapshotEvent } from '../support/recordings.js';
import { type RunningS3rver, startS3rver } from '../support/s3rver.js';

/**
 * What happens to a deleted project's data (ProjectDeletionService and the `project-deletion` task): every feature's
 * rows of it and its recordings' stored objects are removed in the background, a removal interrupted by a stop is
 * resumed by the next process on the database, and no other project loses anything. The tenants are filled by the
 * features' own test fixtures (one of each object), so a new feature's data is counted without an edit here.
 */

const BUCKET = 'recordings';
const PREFIX = 'rec/';
/** Tables of a project's data each fixture fills: each must hold rows of the deleted project before. */
const FILLED = [
  'batch_exports',
  'events',
  'person_distinct_ids',
  'persons',
  'plugin_configs',
  'session_recording_counts',
  'session_recording_event_keys',
  'session_recording_playlist_items',
  'session_recording_playlists',
  'session_recording_sharing',
  'session_recording_snapshots',
  'session_recordings',
];

/**
 * Rows of the project in every table of the schema that has a `team_id` or `project_id` column (partitioned
 * tables counted once, through their parent), its own row, and the rows of its batch exports' runs, logs,
 * backfills and pauses (`exports`: their ids, read before the deletion).
 */
async function rowsOf(
  dataSource: DataSource,
  projectId: number,
  exports: readonly string[],
): Promise<Record<string, number>> {
  const columns = await dataSource.query<{ name: string; col: string }[]>(
    `SELECT c.relname AS name, a.attname AS col
       FROM pg_class c
       JOIN pg_namespace n ON n.oid = c.relnamespace
       JOIN pg_attribute a ON a.attrelid = c.oid
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        AND a.attname IN ('team_id', 'project_id') AND NOT a.attisdropped
        -- The activity log outlives the project: an audit trail, pruned by its retention only (docs/security.md).
        AND c.relname <> 'activity_logs'
      ORDER BY c.relname`,
  );
  const counts: Record<string, number> = {};
  for (const { name, col } of columns) {
    const [row] = await dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM "${name}" WHERE "${col}" = $1`,
      [projectId],
    );
    counts[name] = row.n;
  }
  counts.projects = (
    await dataSource.query<{ n: number }[]>('SELECT count(*)::int AS n FROM projects WHERE id = $1', [
      projectId,
    ])
  )[0].n;
  for (const table of [
    'batch_export_runs',
    'batch_export_logs',
    'batch_export_backfills',
    'batch_export_pauses',
  ]) {
    const [row] = await dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM ${table} WHERE batch_export_id = ANY($1::uuid[])`,
      [exports],
    );
    counts[table] = row.n;
  }
  return counts;
}

describe('the removal of a deleted project', () => {
  let s3: RunningS3rver;
  let t: TestApp;
  let owner: TestUser;
  /** Its default project is the one deleted. */
  let tenant: Tenant;
  /** Another organization's project, untouched. */
  let other: Tenant;
  /** A second project of the deleted one's organization, untouched until the last test deletes it. */
  let second: { id: number; api_token: string };
  const exportsOf: Record<number, string[]> = {};
  const before: Record<number, Record<string, number>> = {};
  const objectsBefore: Record<number, string[]> = {};

  const storageEnv = () => ({
    RECORDING_STORAGE: 's3',
    RECORDING_S3_LAYOUT: 'per-chunk',
    RECORDING_S3_BUCKET: BUCKET,
    RECORDING_S3_PREFIX: PREFIX,
    RECORDING_S3_ENDPOINT: s3.endpoint,
    RECORDING_CHUNK_MAX_EVENTS: '2',
  });

  /** The keys of the stored objects of a project's recordings (per-chunk objects live under its id). */
  const objectsOf = async (projectId: number): Promise<string[]> => {
    const out: string[] = [];
    let token: string | undefined;
    do {
      const page = await s3.client.send(
        new ListObjectsV2Command({
          Bucket: BUCKET,
          Prefix: `${PREFIX}${projectId}/`,
          ContinuationToken: token,
        }),
      );
      for (const o of page.Contents ?? []) out.push(o.Key as string);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return out.sort();
  };

  const record = (app: TestApp, token: string) =>
    app.http
      .post('/s/')
      .send([
        snapshotEvent({
          token,
          sessionId: newSessionId('kept'),
          events: [
            rr.meta(Date.now() - 3000, 'https://shop.example/'),
            rr.full(Date.now() - 2000),
            rr.move(Date.now() - 1000),
          ],
        }),
      ])
      .expect(200);

  const waitUntilGone = async (projectId: number, ms = 20_000) => {
    const until = Date.now() + ms;
    for (;;) {
      const rows = await t.dataSource.query('SELECT 1 FROM projects WHERE id = $1', [projectId]);
      if (!rows.length) return;
      if (Date.now() > until) throw new Error(`project ${projectId} was not removed within ${ms} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  beforeAll(async () => {
    s3 = await startS3rver([BUCKET]);
    // The deletion task is off in this app (the test apps' default): the tests run it where they say.
    t = await createTestApp(storageEnv());
    owner = await t.factories.user();
    tenant = await createTenant(t, owner);
    other = await createTenant(t, owner);
    second = (
      await t.http
        .post(`/api/organizations/${tenant.organizationId}/projects`)
        .set(owner.auth)
        .send({ name: 'Second', session_recording_opt_in: true })
        .expect(201)
    ).body as { id: number; api_token: string };
    await record(t, second.api_token);
    // A recording viewed, and recordings (with their stored objects) beyond the fixtures' one.
    await t.http
      .patch(`/api/projects/${tenant.projectId}/session_recordings/${tenant.ids.session_recordings}`)
      .set(owner.auth)
      .send({ viewed: true })
      .expect(200);
    for (const token of [tenant.apiToken, tenant.apiToken, other.apiToken]) await record(t, token);
    for (const id of [tenant.projectId, other.projectId, second.id]) {
      exportsOf[id] = (
        await t.dataSource.query<{ id: string }[]>('SELECT id FROM batch_exports WHERE team_id = $1', [id])
      ).map((r) => r.id);
      before[id] = await rowsOf(t.dataSource, id, exportsOf[id]);
      objectsBefore[id] = await objectsOf(id);
    }
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await s3?.close();
  });

  it('every feature registered its cleanup, in the order they run', () => {
    expect(t.app.get(ProjectDeletionService).registered()).toEqual([
      'batch-exports',
      'session-recordings',
      'session-recording-playlists',
      'events',
      'persons',
      'plugin-configs',
    ]);
  });

  it('the deleted project holds rows of every kind and stored objects before', () => {
    const deleted = before[tenant.projectId];
    expect(FILLED.filter((table) => !(deleted[table] > 0))).toEqual([]);
    expect(deleted.batch_export_runs).toBeGreaterThan(0);
    expect(deleted.session_recording_views).toBeGreaterThan(0);
    expect(deleted.session_recordings).toBe(3);
    expect(objectsBefore[tenant.projectId].length).toBeGreaterThanOrEqual(3);
    // The other organization's project holds as much.
    expect(FILLED.filter((table) => !(before[other.projectId][table] > 0))).toEqual([]);
    expect(objectsBefore[other.projectId].length).toBeGreaterThanOrEqual(2);
    expect(before[other.projectId].session_recording_views).toBe(0);
    expect(objectsBefore[second.id].length).toBeGreaterThanOrEqual(1);
  });

  it('with the deletion: public links and batch export runs stop at once, before any data is removed', async () => {
    const shared = `/api/shared/${tenant.ids.access_token}`;
    await t.http.get(shared).expect(200);
    const exportsPath = `/api/organizations/${tenant.organizationId}/batch_exports`;
    expect((await t.http.get(exportsPath).set(owner.auth).expect(200)).body.count).toBe(1);

    await t.http.delete(`/api/projects/${tenant.projectId}`).set(owner.auth).expect(204);

    expect((await t.http.get(shared).expect(404)).body.code).toBe('not_found');
    // Its exports left the organization's list, their runs cancelled (none was finished).
    expect((await t.http.get(exportsPath).set(owner.auth).expect(200)).body.count).toBe(0);
    const runs = await t.dataSource.query<{ status: string }[]>(
      'SELECT DISTINCT status FROM batch_export_runs WHERE batch_export_id = ANY($1::uuid[])',
      [exportsOf[tenant.projectId]],
    );
    expect(runs).toEqual([{ status: 'Cancelled' }]);
    // The task is off in this app: the data is all there still, the row marked deleted.
    const now = await rowsOf(t.dataSource, tenant.projectId, exportsOf[tenant.projectId]);
    expect(now).toEqual({ ...before[tenant.projectId], batch_export_logs: now.batch_export_logs });
    expect(await objectsOf(tenant.projectId)).toEqual(objectsBefore[tenant.projectId]);
    // The organization's default project is now the second one.
    const current = await t.http
      .get(`/api/organizations/${tenant.organizationId}/projects/@current`)
      .set(owner.auth)
      .expect(200);
    expect(current.body.id).toBe(second.id);
  });

  it('a removal stopped midway is resumed by the next process at its boot, and removes every row and object of the project only', async () => {
    const deleted = tenant.projectId;
    // A process that removes a few batches (one row each: the export, two of the three recordings) and stops,
    // as one shut down midway would.
    const first = await createTestApp(
      { ...storageEnv(), PROJECT_DELETION_BATCH_SIZE: '1' },
      { databaseUrl: t.databaseUrl },
    );
    let asked = 0;
    const partial = await first.app.get(ProjectDeletionService).deletePending(() => ++asked < 3);
    await first.close();
    expect(partial).toMatchObject({ projects: 0, failed: 0 });
    const midway = await rowsOf(t.dataSource, deleted, exportsOf[deleted]);
    expect(midway.projects).toBe(1);
    expect(midway.batch_exports).toBe(0);
    expect(midway.batch_export_runs).toBe(0);
    expect(midway.session_recordings).toBe(1);
    expect(midway.events).toBe(before[deleted].events);
    expect(midway.persons).toBe(before[deleted].persons);
    // Its recording's objects went with the recording, the others' stay.
    const objectsMidway = await objectsOf(deleted);
    expect(objectsMidway.length).toBeGreaterThan(0);
    expect(objectsMidway.length).toBeLessThan(objectsBefore[deleted].length);

    // The next process resumes at its boot (its timer would tick only in an hour).
    const next = await createTestApp(
      { ...storageEnv(), PROJECT_DELETION_INTERVAL_SECONDS: '3600' },
      { databaseUrl: t.databaseUrl },
    );
    try {
      await waitUntilGone(deleted);
    } finally {
      await next.close();
    }
    const after = await rowsOf(t.dataSource, deleted, exportsOf[deleted]);
    expect(Object.entries(after).filter(([, n]) => n !== 0)).toEqual([]);
    expect(Object.keys(after)).toEqual(expect.arrayContaining([...FILLED, 'session_recording_views']));
    expect(await objectsOf(deleted)).toEqual([]);

    // Nothing of the other projects went.
    for (const id of [other.projectId, second.id]) {
      expect({ id, rows: await rowsOf(t.dataSource, id, exportsOf[id]) }).toEqual({ id, rows: before[id] });
      expect({ id, objects: await objectsOf(id) }).toEqual({ id, objects: objectsBefore[id] });
    }
    await t.http.get(`/api/projects/${other.projectId}/session_recordings`).set(owner.auth).expect(200);
    await t.http.get(`/api/shared/${other.ids.access_token}`).expect(200);
  }, 60_000);

  it('the process that takes a deletion starts the removal at once', async () => {
    const app = await createTestApp(
      { ...storageEnv(), PROJECT_DELETION_INTERVAL_SECONDS: '3600' },
      { databaseUrl: t.databaseUrl },
    );
    try {
      await app.http.delete(`/api/projects/${second.id}`).set(owner.auth).expect(204);
      await waitUntilGone(second.id, 10_000);
    } finally {
      await app.close();
    }
    expect(await objectsOf(second.id)).toEqual([]);
    const left = await rowsOf(t.dataSource, second.id, []);
    expect(Object.entries(left).filter(([, n]) => n !== 0)).toEqual([]);
    expect(await objectsOf(other.projectId)).toEqual(objectsBefore[other.projectId]);
    // The deletion itself stays in the activity log.
    const [deletion] = await t.dataSource.query<{ n: number }[]>(
      `SELECT count(*)::int AS n FROM activity_logs WHERE team_id = $1 AND scope = 'Project' AND activity = 'deleted'`,
      [second.id],
    );
    expect(deletion.n).toBe(1);
  }, 30_000);
});
