/**
 * Fair sharing of the batch export workers: runs count against their organization, their project and their
 * user (the export's creator, else the organization's owner), so one user owning three organizations cannot hold every worker slot, another
 * tenant's run takes a free slot, and a run waiting for a slot longer than BATCH_EXPORT_SLOT_WAIT_WARNING_SECONDS
 * gets a WARNING line naming the caps that hold it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { runsOf, seedPersons, sleep, waitFor } from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';

const H0 = new Date('2026-01-01T00:00:00.000Z');
const H1 = new Date('2026-01-01T01:00:00.000Z');

/** An HTTP receiver that holds every request unanswered until `release`; the paths of the requests held. */
async function holdingReceiver(): Promise<{
  url: string;
  held: string[];
  release(): void;
  close(): Promise<void>;
}> {
  const waiting: ServerResponse[] = [];
  const held: string[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      held.push(req.url ?? '');
      waiting.push(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const release = () => {
    for (const res of waiting.splice(0)) res.writeHead(200).end('{"status":1}');
  };
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    held,
    release,
    close: () =>
      new Promise<void>((resolve) => {
        release();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('batch export workers shared fairly between users, organizations and projects', () => {
  let t: TestApp;
  let busy: TestUser;
  let other: TestUser;

  beforeAll(async () => {
    t = await createTestApp({
      BATCH_EXPORT_WORKERS: 'true',
      BATCH_EXPORT_WORKER_CONCURRENCY: '4',
      BATCH_EXPORT_POLL_INTERVAL_MS: '100',
      BATCH_EXPORT_SUPERVISE_SECONDS: '1',
      BATCH_EXPORT_HTTP_TIMEOUT_MS: '120000',
      BATCH_EXPORT_MAX_CONCURRENT_RUNS_PER_ORGANIZATION: '2',
      BATCH_EXPORT_MAX_CONCURRENT_RUNS_PER_PROJECT: '2',
      BATCH_EXPORT_MAX_CONCURRENT_RUNS_PER_USER: '2',
      BATCH_EXPORT_SLOT_WAIT_WARNING_SECONDS: '2',
    });
    t.clock.set(new Date('2026-01-03T00:00:00.000Z'));
    busy = await t.factories.user();
    other = await t.factories.user();
  });

  afterAll(async () => {
    await t?.close();
  });

  /** An organization of `owner` with a persons export to `url` backfilled over one hour holding one person. */
  const exportOf = async (owner: TestUser, url: string, name: string) => {
    const org = await t.factories.organization(owner);
    await seedPersons(t.dataSource, org.teams[0].id, [
      { distinctIds: [`${name}-d`], properties: { name }, updatedAt: new Date(H0.getTime() + 60_000) },
    ]);
    const { id } = (
      await t.http
        .post(`/api/organizations/${org.id}/batch_exports`)
        .set(owner.auth)
        .send({
          name,
          interval: 'hour',
          model: 'persons',
          destination: { type: 'HTTP', config: { url: `${url}/${name}`, token: 'tok' } },
        })
        .expect(201)
    ).body as { id: string };
    return { orgId: org.id, id };
  };
  const backfill = (owner: TestUser, e: { orgId: string; id: string }) =>
    t.http
      .post(`/api/organizations/${e.orgId}/batch_exports/${e.id}/backfill`)
      .set(owner.auth)
      .send({ start_at: H0.toISOString(), end_at: H1.toISOString() })
      .expect(200);

  it("one user's three organizations hold at most the user's cap of slots; another tenant's run takes a free one", async () => {
    const receiver = await holdingReceiver();
    try {
      // Two exports in each of three organizations of one user: six runs, four worker slots.
      const mine: { orgId: string; id: string }[] = [];
      for (const org of ['a', 'b', 'c']) {
        for (const n of [1, 2]) mine.push(await exportOf(busy, receiver.url, `busy-${org}${n}`));
      }
      // The first organization's two exports as if created before creators were recorded: their organization's
      // owner (the same user) stands for it.
      await t.dataSource.query('UPDATE batch_exports SET created_by_id = NULL WHERE id = ANY($1::uuid[])', [
        [mine[0].id, mine[1].id],
      ]);
      const [{ created_by_id: creator }] = await t.dataSource.query(
        'SELECT created_by_id FROM batch_exports WHERE id = $1',
        [mine[2].id],
      );
      expect(creator).toBe(busy.id);
      for (const e of mine) await backfill(busy, e);
      await waitFor(async () => (receiver.held.length >= 2 ? true : undefined), 20000, 'two held requests');
      // Time for the free slots to be taken, were the user's runs allowed to.
      await sleep(1500);
      const theirs = await exportOf(other, receiver.url, 'other');
      await backfill(other, theirs);
      await waitFor(
        async () => (receiver.held.includes('/other') ? true : undefined),
        20000,
        "the other tenant's request",
      );
      // Over a few seconds, never more than two of the user's runs executing.
      for (let i = 0; i < 10; i++) {
        const statuses = (await Promise.all(mine.map((e) => runsOf(t.http, busy.auth, e.orgId, e.id)))).map(
          ([run]) => run.status,
        );
        expect(statuses.filter((s) => s === 'Running')).toHaveLength(2);
        expect(statuses.filter((s) => s === 'Starting')).toHaveLength(4);
        await sleep(300);
      }
      expect(receiver.held.filter((p) => p.startsWith('/busy-'))).toHaveLength(2);

      // The user's waiting runs are logged once they waited past BATCH_EXPORT_SLOT_WAIT_WARNING_SECONDS.
      const warnings = await waitFor(
        async () => {
          const rows: { run_id: string; message: string }[] = await t.dataSource.query(
            `SELECT run_id::text, message FROM batch_export_logs
              WHERE batch_export_id = ANY($1::uuid[]) AND level = 'WARNING'
                AND message LIKE 'Waiting for a worker slot%'`,
            [mine.map((e) => e.id)],
          );
          return rows.length >= 4 ? rows : undefined;
        },
        20000,
        'the warnings of the waiting runs',
      );
      expect(warnings).toHaveLength(4);
      expect(new Set(warnings.map((w) => w.run_id)).size).toBe(4);
      for (const w of warnings) {
        expect(w.message).toMatch(
          /^Waiting for a worker slot for \d+ s\. Runs executing now: its organization's [01] of 2, its project's [01] of 2, its user's 2 of 2; below every cap, all workers are busy\.$/,
        );
      }

      // Released: every run completes, in turn.
      const statuses = await waitFor(
        async () => {
          receiver.release();
          const all = [
            ...(await Promise.all(mine.map((e) => runsOf(t.http, busy.auth, e.orgId, e.id)))),
            await runsOf(t.http, other.auth, theirs.orgId, theirs.id),
          ].map(([run]) => run.status);
          return all.every((status) => status === 'Completed') ? all : undefined;
        },
        30000,
        'every run to complete',
      );
      expect(statuses).toEqual(Array(7).fill('Completed'));
    } finally {
      await receiver.close();
    }
  }, 120_000);
});
