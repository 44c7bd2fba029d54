import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { waitForRunsToEnd } from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { createDestinationDatabase, dropDestinationDatabase } from '../support/test-database.js';

const DEST_PASSWORD = 'activity-destination-password';
const HOUR_MS = 3600_000;

/**
 * The `activity_log` batch export model (docs/batch-exports.md): a backfill sends the project's activity log
 * entries to a Postgres destination with their detail (secrets masked), a repeated backfill does not duplicate
 * them, another project's entries stay out, and each run's start is itself an entry.
 */
describe('activity_log batch exports', () => {
  let t: TestApp;
  let owner: TestUser;
  let orgId: string;
  let projectId: number;
  let dest: { name: string; url: string; user: string };
  let destination: pg.Client;

  beforeAll(async () => {
    t = await createTestApp({
      BATCH_EXPORT_WORKERS: 'true',
      BATCH_EXPORT_WORKER_CONCURRENCY: '2',
      BATCH_EXPORT_POLL_INTERVAL_MS: '100',
      BATCH_EXPORT_MAX_ATTEMPTS: '2',
      BATCH_EXPORT_RETRY_DELAY_SECONDS: '1',
    });
    owner = await t.factories.user();
    const org = await t.factories.organization(owner, 'Exported activity');
    orgId = org.id;
    projectId = org.teams[0].id;
    dest = await createDestinationDatabase('activitydest', DEST_PASSWORD);
    destination = new pg.Client({ connectionString: dest.url });
    await destination.connect();
  }, 60000);

  afterAll(async () => {
    await destination?.end();
    await t?.close();
    if (dest) await dropDestinationDatabase(dest.name);
  });

  it("exports the project's entries to Postgres, once, with their detail", async () => {
    // Entries of this project: a settings change; of another organization's project: none exported.
    await t.http.patch(`/api/projects/${projectId}`).set(owner.auth).send({ name: 'Audited' }).expect(200);
    const other = await t.factories.organization(owner, 'Other activity');
    await t.http
      .patch(`/api/projects/${other.teams[0].id}`)
      .set(owner.auth)
      .send({ name: 'Elsewhere' })
      .expect(200);
    const url = new URL(dest.url);
    const created = await t.http
      .post(`/api/organizations/${orgId}/batch_exports`)
      .set(owner.auth)
      .send({
        name: 'Activity to PG',
        model: 'activity_log',
        interval: 'hour',
        destination: {
          type: 'Postgres',
          config: {
            host: url.hostname,
            port: Number(url.port || 5432),
            database: dest.name,
            user: dest.user,
            password: DEST_PASSWORD,
            table_name: 'activity_out',
          },
        },
      })
      .expect(201);
    const exportId = (created.body as { id: string; model: string }).id;
    expect((created.body as { model: string }).model).toBe('activity_log');
    const hour = Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
    t.clock.set(new Date(hour + 3 * HOUR_MS));
    const backfill = () =>
      t.http
        .post(`/api/organizations/${orgId}/batch_exports/${exportId}/backfill`)
        .set(owner.auth)
        .send({
          start_at: new Date(hour - HOUR_MS).toISOString(),
          end_at: new Date(hour + HOUR_MS).toISOString(),
        })
        .expect(200);
    await backfill();
    const runs = await waitForRunsToEnd(t.http, owner.auth, orgId, exportId, 2);
    expect(runs.map((r) => r.status)).toEqual(['Completed', 'Completed']);

    const stored = (await t.dataSource.query(
      `SELECT id::text AS id FROM activity_logs
        WHERE team_id = $1 AND created_at < $2 ORDER BY created_at, id`,
      [projectId, new Date(hour + HOUR_MS)],
    )) as { id: string }[];
    const { rows } = await destination.query(
      `SELECT id, team_id, organization_id, user_uuid, user_email, is_system, api_key_id, activity, scope, item_id,
              detail, created_at, _inserted_at
         FROM activity_out ORDER BY created_at, id`,
    );
    // Every entry of the project up to the backfill's end (those written before the runs started), and only them.
    const exported = rows.map((r: { id: string }) => r.id);
    expect(exported).toEqual(stored.map((s) => s.id).filter((id) => exported.includes(id)));
    expect(rows.every((r: { team_id: number }) => r.team_id === projectId)).toBe(true);
    const update = rows.find(
      (r: { scope: string; activity: string }) => r.scope === 'Project' && r.activity === 'updated',
    );
    expect(update).toMatchObject({
      organization_id: orgId,
      user_uuid: owner.uuid,
      user_email: owner.email,
      is_system: false,
      api_key_id: owner.keyId,
      item_id: String(projectId),
    });
    expect(update.detail.changes).toEqual([
      expect.objectContaining({ type: 'Project', action: 'changed', field: 'name', after: 'Audited' }),
    ]);
    const creation = rows.find(
      (r: { scope: string; activity: string }) => r.scope === 'BatchExport' && r.activity === 'created',
    );
    expect(creation.item_id).toBe(exportId);
    expect(JSON.stringify(creation.detail)).not.toContain(DEST_PASSWORD);

    // Each run's start is an entry of the system.
    const starts = (await t.dataSource.query(
      `SELECT count(*)::int AS n FROM activity_logs
        WHERE item_id = $1 AND activity = 'run_started' AND is_system AND user_id IS NULL`,
      [exportId],
    )) as { n: number }[];
    expect(starts[0].n).toBe(2);

    // A repeated backfill does not duplicate what was sent.
    const before = rows.length;
    await backfill();
    await waitForRunsToEnd(t.http, owner.auth, orgId, exportId, 4);
    const again = await destination.query(
      `SELECT count(*)::int AS n, count(DISTINCT id)::int AS d FROM activity_out`,
    );
    expect(again.rows[0].n).toBe(again.rows[0].d);
    expect(again.rows[0].n).toBeGreaterThanOrEqual(before);
  }, 60_000);
});
