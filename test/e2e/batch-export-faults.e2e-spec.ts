/**
 * Batch export runs under faults: a destination down, cancels, pauses, automatic pause with its e-mail, two
 * worker processes sharing runs, a worker killed mid-run, and SIGTERM draining a worker.
 *
 * @serial: starts and kills worker processes whose deadlines a second busy file would stretch
 * (test/support/test-runner.js).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';
import pg from 'pg';
import {
  runsOf,
  seedPersons,
  seedSessions,
  sleep,
  startExportWorker,
  startHttpReceiver,
  TEST_WORKER_ENV,
  waitFor,
  waitForRunsToEnd,
} from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import type { ServiceProcess } from '../support/service-process.js';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.js';
import { createDestinationDatabase, dropDestinationDatabase } from '../support/test-database.js';
import { margin } from '../support/shared-machine.js';

const H0 = new Date('2026-01-01T00:00:00.000Z');
const hours = (n: number) => new Date(H0.getTime() + n * 3600_000);

/**
 * A PostgreSQL destination that can be down and come back on the same port: a TCP proxy to the PostgreSQL of
 * `target`, bound to port 0 and held for the whole test (no other process can take the port between "down" and
 * "up"). While down, it resets every connection at once (the client sees ECONNRESET before any byte); while
 * up, it relays them.
 */
async function switchableProxy(target: URL): Promise<{ port: number; up: boolean; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const state = { up: false };
  const server: Server = createServer((client) => {
    if (!state.up) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    get up() {
      return state.up;
    },
    set up(value: boolean) {
      state.up = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

const WORKER_ENV = {
  ...TEST_WORKER_ENV,
  BATCH_EXPORT_PAGE_SIZE: '2',
  BATCH_EXPORT_HTTP_MAX_RETRIES: '0',
};

describe('batch export runs under faults', () => {
  let t: TestApp;
  let smtp: TestSmtpServer;
  let owner: TestUser;
  let orgId: string;
  let teamId: number;
  let dest: { name: string; url: string; user: string; password: string };
  const path = (rest = '') => `/api/organizations/${orgId}/batch_exports${rest}`;
  const create = async (body: Record<string, unknown>) =>
    (
      await t.http
        .post(path())
        .set(owner.auth)
        .send({ interval: 'hour', model: 'sessions', ...body })
        .expect(201)
    ).body as { id: string };
  const backfill = (id: string, start: Date, end: Date) =>
    t.http
      .post(path(`/${id}/backfill`))
      .set(owner.auth)
      .send({ start_at: start.toISOString(), end_at: end.toISOString() })
      .expect(200);
  const logsOf = async (id: string) =>
    (
      await t.http
        .get(path(`/${id}/logs?limit=1000`))
        .set(owner.auth)
        .expect(200)
    ).body.results as {
      level: string;
      message: string;
      run_id: string | null;
    }[];
  const jobStates = async (runIds: string[]) =>
    (
      await t.dataSource.query(`SELECT state FROM pgboss.job WHERE id = ANY($1::uuid[]) ORDER BY id`, [
        runIds,
      ])
    ).map((r: { state: string }) => r.state);
  const pgConfig = (port: number, table: string) => ({
    host: '127.0.0.1',
    port,
    database: dest.name,
    user: dest.user,
    password: dest.password,
    table_name: table,
  });

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await createTestApp({ ...WORKER_ENV, SMTP_URL: smtp.url });
    t.clock.set(new Date('2026-01-03T00:00:00.000Z'));
    owner = await t.factories.user({ email: `owner-${process.pid}@example.com` });
    const org = await t.factories.organization(owner);
    orgId = org.id;
    teamId = org.teams[0].id;
    dest = await createDestinationDatabase('faultdest', 'fault-destination-password');
    // One recording per hour of the first day.
    await seedSessions(
      t.dataSource,
      teamId,
      Array.from({ length: 24 }, (_, i) => ({
        sessionId: `s-${String(i).padStart(2, '0')}`,
        distinctId: `d-${i}`,
        start: hours(i),
        end: new Date(hours(i).getTime() + 60_000),
        receivedAt: new Date(hours(i).getTime() + 120_000),
        clicks: i,
      })),
    );
  });

  afterAll(async () => {
    await t?.close();
    await smtp?.close();
    if (dest) await dropDestinationDatabase(dest.name);
  });

  it('a destination that is down: retried with backoff, FailedRetryable, then a later run succeeds', async () => {
    const proxy = await switchableProxy(new URL(dest.url));
    try {
      const { id } = await create({
        name: 'Down',
        destination: { type: 'Postgres', config: pgConfig(proxy.port, 'down_sessions') },
      });
      await backfill(id, hours(0), hours(1));
      const [failed] = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 1);
      expect(failed.status).toBe('FailedRetryable');
      expect(failed.latest_error).toMatch(/^connecting to 127\.0\.0\.1: .*ECONNRESET/);
      const lines = (await logsOf(id))
        .filter((l) => l.run_id === failed.id)
        .map((l) => `${l.level} ${l.message}`);
      expect(lines).toEqual(
        expect.arrayContaining([
          expect.stringMatching(
            /^WARNING Attempt 1 of 2 failed: connecting to 127\.0\.0\.1: .* It will be retried\.$/,
          ),
          expect.stringMatching(/^ERROR Run failed after 2 attempts: connecting to 127\.0\.0\.1/),
          expect.stringMatching(/\(attempt 2 of 2\)\.$/),
        ]),
      );
      proxy.up = true;
      await backfill(id, hours(1), hours(2));
      const runs = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 2);
      expect(runs.map((r) => [r.status, r.records_completed])).toEqual([
        ['FailedRetryable', null],
        ['Completed', 1],
      ]);
    } finally {
      await proxy.close();
    }
  });

  it('cancelling a running run stops it within seconds; deleting an export cancels its jobs', async () => {
    const receiver = await startHttpReceiver();
    try {
      receiver.hold = true;
      const { id } = await create({
        name: 'Slow',
        destination: { type: 'HTTP', config: { url: receiver.url, token: 'tok' } },
      });
      await backfill(id, hours(2), hours(5));
      const running = await waitFor(async () => {
        const runs = await runsOf(t.http, owner.auth, orgId, id);
        return runs.find((r) => r.status === 'Running');
      });
      const started = Date.now();
      await t.http
        .post(path(`/${id}/runs/${running.id}/cancel`))
        .set(owner.auth)
        .expect(200);
      await waitFor(async () => {
        const lines = (await logsOf(id)).filter((l) => l.run_id === running.id).map((l) => l.message);
        return lines.includes('Run stopped: it was cancelled.') ? true : undefined;
      }, 5000);
      expect(Date.now() - started).toBeLessThan(margin(3000));
      // The next run of the export starts (and is held by the receiver too); then the export is deleted.
      const runs = await waitFor(async () => {
        const all = await runsOf(t.http, owner.auth, orgId, id);
        return all.some((r) => r.status === 'Running') ? all : undefined;
      });
      await t.http
        .delete(path(`/${id}`))
        .set(owner.auth)
        .expect(204);
      await waitFor(async () => {
        const rows: { status: string }[] = await t.dataSource.query(
          'SELECT status FROM batch_export_runs WHERE batch_export_id = $1',
          [id],
        );
        return rows.every((r) => r.status === 'Cancelled') ? true : undefined;
      }, 5000);
      expect(await jobStates(runs.map((r) => r.id))).toEqual(['cancelled', 'cancelled', 'cancelled']);
      expect(receiver.received).toEqual([]);
    } finally {
      await receiver.close();
    }
  });

  it("a paused export's runs wait (their jobs parked) and run in interval order after unpause", async () => {
    const receiver = await startHttpReceiver();
    try {
      const { id } = await create({
        name: 'Paused',
        paused: true,
        destination: { type: 'HTTP', config: { url: receiver.url, token: 'tok' } },
      });
      await backfill(id, hours(5), hours(9));
      await sleep(1500);
      const waiting = await runsOf(t.http, owner.auth, orgId, id);
      expect(waiting.map((r) => r.status)).toEqual(['Starting', 'Starting', 'Starting', 'Starting']);
      const parked: { start_after: Date }[] = await t.dataSource.query(
        'SELECT start_after FROM pgboss.job WHERE id = ANY($1::uuid[])',
        [waiting.map((r) => r.id)],
      );
      expect(parked.map((p) => p.start_after.toISOString())).toEqual(
        Array(4).fill('9999-12-31T00:00:00.000Z'),
      );
      await t.http
        .post(path(`/${id}/unpause`))
        .set(owner.auth)
        .expect(200);
      const done = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 4);
      expect(done.map((r) => r.status)).toEqual(['Completed', 'Completed', 'Completed', 'Completed']);
      expect(receiver.received.map((r) => r.body.batch[0].session_id)).toEqual([
        's-05',
        's-06',
        's-07',
        's-08',
      ]);
    } finally {
      await receiver.close();
    }
  });

  it('ten non-retryable failures in the last fifty runs pause the export, log it and e-mail the admins', async () => {
    const { id } = await create({
      name: 'Always failing',
      destination: {
        type: 'BigQuery',
        config: {
          project_id: 'p',
          dataset_id: 'd',
          table_id: 't',
          private_key: 'k',
          private_key_id: 'i',
          client_email: 'e@p.iam.gserviceaccount.com',
          token_uri: 'https://oauth2.googleapis.com/token',
        },
      },
    });
    await backfill(id, hours(0), hours(12));
    await waitFor(async () => {
      const [row] = await t.dataSource.query('SELECT paused FROM batch_exports WHERE id = $1', [id]);
      return row.paused ? true : undefined;
    });
    await sleep(500);
    const runs = await runsOf(t.http, owner.auth, orgId, id);
    expect(runs.filter((r) => r.status === 'Failed')).toHaveLength(10);
    // The two runs left wait for the unpause.
    expect(runs.filter((r) => r.status === 'Starting')).toHaveLength(2);
    const warnings = (await logsOf(id)).filter((l) => l.level === 'WARNING').map((l) => l.message);
    expect(warnings).toContain(
      'Batch export paused automatically: 10 of its last 50 runs failed. Fix the destination, then unpause it (and backfill the intervals it missed).',
    );
    const mail = await waitFor(async () =>
      smtp.messages.find(
        (m) => m.subject.startsWith('Batch export paused') && m.subject.includes('Always failing'),
      ),
    );
    expect(mail.subject).toBe('Batch export paused after repeated failures: Always failing');
    expect(mail.rcptTo).toEqual([owner.email]);
    expect(mail.text).toContain(`/api/organizations/${orgId}/batch_exports/${id}/unpause`);
  });

  it('two worker processes share the runs and never run one twice; runs of an export go in interval order', async () => {
    const second = await createTestApp(WORKER_ENV, { databaseUrl: t.databaseUrl });
    // The same day as the first app's: the sessions read are within their retention for both workers.
    second.clock.set(new Date('2026-01-03T00:00:00.000Z'));
    const receiver = await startHttpReceiver();
    receiver.delayMs = 20;
    try {
      const ids = [];
      for (const name of ['A', 'B', 'C']) {
        const { id } = await create({
          name,
          destination: { type: 'HTTP', config: { url: `${receiver.url}${name}`, token: 'tok' } },
        });
        ids.push(id);
        await backfill(id, hours(12), hours(24));
      }
      for (const id of ids) await waitForRunsToEnd(t.http, owner.auth, orgId, id, 12, 60000);
      const started: { run_id: string; n: number }[] = await t.dataSource.query(
        `SELECT run_id, count(*)::int AS n FROM batch_export_logs
          WHERE batch_export_id = ANY($1::uuid[]) AND message LIKE 'Run started:%' GROUP BY run_id`,
        [ids],
      );
      expect(started).toHaveLength(36);
      expect(started.every((s) => s.n === 1)).toBe(true);
      for (const name of ['A', 'B', 'C']) {
        const got = receiver.received
          .filter((r) => r.path.endsWith(name))
          .map((r) => r.body.batch[0].session_id);
        expect(got).toEqual(Array.from({ length: 12 }, (_, i) => `s-${12 + i}`));
      }
    } finally {
      await receiver.close();
      await second.close();
    }
  });
});

describe('batch export worker processes', () => {
  let t: TestApp;
  let owner: TestUser;
  let orgId: string;
  let teamId: number;
  let dest: { name: string; url: string; user: string; password: string };
  let destination: pg.Client;
  const children: ServiceProcess[] = [];
  const path = (rest = '') => `/api/organizations/${orgId}/batch_exports${rest}`;
  const spawnWorker = (extra: Record<string, string> = {}) =>
    startExportWorker(t.databaseUrl, children, { ...WORKER_ENV, ...extra });

  beforeAll(async () => {
    t = await createTestApp();
    owner = await t.factories.user();
    const org = await t.factories.organization(owner);
    orgId = org.id;
    teamId = org.teams[0].id;
    dest = await createDestinationDatabase('killdest', 'kill-destination-password');
    destination = new pg.Client({ connectionString: dest.url });
    await destination.connect();
  });

  afterAll(async () => {
    for (const child of children) if (child.child.exitCode === null) child.child.kill('SIGKILL');
    await destination?.end();
    await t?.close();
    if (dest) await dropDestinationDatabase(dest.name);
  });

  it('a worker killed mid-run: another takes the run up again and the destination holds every row once', async () => {
    await seedPersons(
      t.dataSource,
      teamId,
      Array.from({ length: 7 }, (_, i) => ({
        distinctIds: [`k-${i}`],
        properties: { i },
        updatedAt: new Date(H0.getTime() + i * 60_000),
      })),
    );
    const url = new URL(dest.url);
    const { id } = (
      await t.http
        .post(path())
        .set(owner.auth)
        .send({
          name: 'Killed',
          interval: 'hour',
          model: 'persons',
          destination: {
            type: 'Postgres',
            config: {
              host: '127.0.0.1',
              port: Number(url.port || 5432),
              database: dest.name,
              user: dest.user,
              password: dest.password,
              table_name: 'killed',
            },
          },
        })
        .expect(201)
    ).body as { id: string };
    // The table exists and is locked: the first worker loads its staging table, then waits to merge.
    await destination.query(`CREATE TABLE killed (team_id integer, distinct_id text, person_id text, properties jsonb,
      person_distinct_id_version bigint, person_version bigint, created_at timestamptz, _inserted_at timestamptz,
      is_deleted boolean, PRIMARY KEY (team_id, distinct_id))`);
    await destination.query('BEGIN');
    await destination.query('LOCK TABLE killed IN ACCESS EXCLUSIVE MODE');
    const first = await spawnWorker();
    await t.http
      .post(path(`/${id}/backfill`))
      .set(owner.auth)
      .send({ start_at: H0.toISOString(), end_at: new Date(H0.getTime() + 3600_000).toISOString() })
      .expect(200);
    // A worker process boots, takes the run and loads its staging table: generous deadlines for a busy machine.
    const [run] = await waitFor(async () => {
      const runs = await runsOf(t.http, owner.auth, orgId, id);
      return runs[0]?.status === 'Running' ? runs : undefined;
    }, 120_000);
    // Waiting on the lock, mid-merge.
    await waitFor(
      async () => {
        // This client is in the locking transaction, whose view of pg_stat_activity is cached until cleared.
        await destination.query('SELECT pg_stat_clear_snapshot()');
        const { rows } = await destination.query(
          `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'`,
          [dest.name],
        );
        return rows[0].n > 0 ? true : undefined;
      },
      120_000,
      'the first worker to wait on the locked table',
    );
    first.child.kill('SIGKILL');
    await first.exited;
    await destination.query('COMMIT');
    const second = await spawnWorker();
    const [done] = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 1, 120_000);
    expect([done.id, done.status, done.records_completed]).toEqual([run.id, 'Completed', 7]);
    const { rows } = await destination.query('SELECT distinct_id FROM killed ORDER BY distinct_id');
    expect(rows.map((r) => r.distinct_id)).toEqual(Array.from({ length: 7 }, (_, i) => `k-${i}`));
    const starts = (
      await t.dataSource.query(
        `SELECT message FROM batch_export_logs WHERE run_id = $1 AND message LIKE 'Run started:%' ORDER BY id`,
        [run.id],
      )
    ).map((r: { message: string }) => r.message);
    expect(starts).toEqual([
      expect.stringMatching(/attempt 1 of 2/),
      expect.stringMatching(/attempt 2 of 2/),
    ]);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  }, 420_000);

  it('a worker killed mid-run over HTTP: a receiver deduplicating on the batch id keeps exactly the source', async () => {
    // 2,500 persons changed in the third hour: three batches of at most 1,000 records.
    const H2 = new Date(H0.getTime() + 2 * 3600_000);
    await t.dataSource.query(
      `WITH p AS (INSERT INTO persons (team_id, properties, created_at, updated_at)
                  SELECT $1, jsonb_build_object('i', g), $2, $2 FROM generate_series(0, 2499) g RETURNING id, properties)
       INSERT INTO person_distinct_ids (team_id, distinct_id, person_id, updated_at)
       SELECT $1, 'h-' || lpad(p.properties->>'i', 4, '0'), p.id, $2 FROM p`,
      [teamId, new Date(H2.getTime() + 60_000)],
    );
    const receiver = await startHttpReceiver();
    try {
      // The first batch is stored; the second is held unanswered while the worker is killed.
      receiver.holdAfter = 1;
      const { id } = (
        await t.http
          .post(path())
          .set(owner.auth)
          .send({
            name: 'Killed over HTTP',
            interval: 'hour',
            model: 'persons',
            destination: { type: 'HTTP', config: { url: receiver.url, token: 'kill-token' } },
          })
          .expect(201)
      ).body as { id: string };
      // The held request must outlive a loaded machine's delays: no attempt ends on its deadline before the kill.
      const env = {
        BATCH_EXPORT_PAGE_SIZE: '500',
        BATCH_EXPORT_HTTP_TIMEOUT_MS: '120000',
        BATCH_EXPORT_MAX_ATTEMPTS: '3',
      };
      const first = await spawnWorker(env);
      await t.http
        .post(path(`/${id}/backfill`))
        .set(owner.auth)
        .send({ start_at: H2.toISOString(), end_at: new Date(H2.getTime() + 3600_000).toISOString() })
        .expect(200);
      await waitFor(
        async () => (receiver.received.length === 1 ? true : undefined),
        120_000,
        'the first batch to be stored',
      );
      await sleep(500);
      first.child.kill('SIGKILL');
      await first.exited;
      receiver.holdAfter = null;
      const second = await spawnWorker(env);
      const [done] = await waitForRunsToEnd(t.http, owner.auth, orgId, id, 1, 60_000);
      expect([done.status, done.records_completed]).toEqual(['Completed', 2500]);
      // The first batch arrived twice (re-sent by the second attempt) under the same id, header and body alike.
      const ids = receiver.received.map((r) => r.body.batch_id);
      expect(receiver.received.map((r) => r.batchId)).toEqual(ids);
      expect(ids.slice(0, 2)).toEqual([`${done.id}:0`, `${done.id}:0`]);
      expect([...new Set(ids)]).toEqual([`${done.id}:0`, `${done.id}:1`, `${done.id}:2`]);
      // What a receiver that drops a batch id it already stored keeps: every source row once.
      const kept = new Map(receiver.received.map((r) => [r.body.batch_id, r.body.batch]));
      const rows = [...kept.values()].flat().map((r) => r.distinct_id as string);
      expect(rows.length).toBe(2500);
      expect([...rows].sort()).toEqual(
        Array.from({ length: 2500 }, (_, i) => `h-${String(i).padStart(4, '0')}`),
      );
      second.child.kill('SIGTERM');
      expect(await second.exited).toBe(0);
    } finally {
      await receiver.close();
    }
  }, 420_000);

  it('SIGTERM drains the workers: the run in progress finishes, then the process exits 0', async () => {
    const receiver = await startHttpReceiver();
    try {
      receiver.delayMs = 1500;
      const { id } = (
        await t.http
          .post(path())
          .set(owner.auth)
          .send({
            name: 'Drained',
            interval: 'hour',
            model: 'persons',
            destination: { type: 'HTTP', config: { url: receiver.url, token: 'tok' } },
          })
          .expect(201)
      ).body as { id: string };
      const worker = await spawnWorker({
        BATCH_EXPORT_DRAIN_TIMEOUT_MS: '8000',
        SHUTDOWN_TIMEOUT_MS: '15000',
      });
      await t.http
        .post(path(`/${id}/backfill`))
        .set(owner.auth)
        .send({ start_at: H0.toISOString(), end_at: new Date(H0.getTime() + 3600_000).toISOString() })
        .expect(200);
      await waitFor(async () =>
        (await runsOf(t.http, owner.auth, orgId, id))[0]?.status === 'Running' ? true : undefined,
      );
      worker.child.kill('SIGTERM');
      expect(await worker.exited).toBe(0);
      const [run] = await runsOf(t.http, owner.auth, orgId, id);
      expect([run.status, run.records_completed]).toEqual(['Completed', 7]);
      expect(receiver.received).toHaveLength(1);
      expect(receiver.received[0].body.batch).toHaveLength(7);
      expect(worker.logs().map((l) => l.msg)).toEqual(
        expect.arrayContaining(['batch export workers stopped']),
      );
    } finally {
      await receiver.close();
    }
  }, 40000);
});
