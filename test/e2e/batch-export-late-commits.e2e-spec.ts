import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import pg from 'pg';
import { startHttpReceiver, waitFor, waitForRunsToEnd, type ApiRun } from '../support/batch-export-runs.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import type { TestUser } from '../support/factories.js';
import { newSessionId, rr, snapshotEvent, type Rrweb } from '../support/recordings.js';
import { type RunningS3rver, startS3rver } from '../support/s3rver.js';
import {
  beginAsService,
  createDestinationDatabase,
  dropDestinationDatabase,
} from '../support/test-database.js';

const DEST_PASSWORD = 'late-commit-destination-password';
const BUCKET = 'late';
const STEP_MS = 5 * 60_000;

describe('batch exports and writes that commit late', () => {
  let t: TestApp;
  let owner: TestUser;
  let orgId: string;
  let token: string;
  let dest: { name: string; url: string; user: string };
  let destination: pg.Client;
  let s3: RunningS3rver;
  const path = (rest = '') => `/api/organizations/${orgId}/batch_exports${rest}`;
  const create = async (body: Record<string, unknown>) =>
    (await t.http.post(path()).set(owner.auth).send(body).expect(201)).body as { id: string };
  const pgConfig = (table: string) => {
    const url = new URL(dest.url);
    return {
      host: url.hostname,
      port: Number(url.port || 5432),
      database: dest.name,
      user: dest.user,
      password: DEST_PASSWORD,
      table_name: table,
    };
  };
  const capture = (sessionId: string, distinctId: string, events: Rrweb[]) =>
    t.http
      .post('/s/')
      .send([snapshotEvent({ token, sessionId, distinctId, events })])
      .then((res) => {
        expect(res.status).toBe(200);
        return res;
      });
  /** Every JSON Lines record under `prefix` in the bucket. */
  const s3Records = async (prefix: string) => {
    const listed = await s3.client.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: prefix }));
    const out: Record<string, unknown>[] = [];
    for (const o of listed.Contents ?? []) {
      const object = await s3.client.send(new GetObjectCommand({ Bucket: BUCKET, Key: o.Key }));
      const text = gunzipSync(Buffer.from(await object.Body!.transformToByteArray())).toString('utf8');
      for (const line of text.split('\n')) if (line) out.push(JSON.parse(line));
    }
    return out;
  };

  beforeAll(async () => {
    s3 = await startS3rver([BUCKET]);
    t = await createTestApp({
      SCHEDULER_ENABLED: 'true',
      SCHEDULER_TICK_SECONDS: '1',
      BATCH_EXPORT_WORKERS: 'true',
      BATCH_EXPORT_WORKER_CONCURRENCY: '2',
      BATCH_EXPORT_POLL_INTERVAL_MS: '100',
      BATCH_EXPORT_MAX_ATTEMPTS: '2',
      BATCH_EXPORT_RETRY_DELAY_SECONDS: '1',
    });
    owner = await t.factories.user();
    const org = await t.factories.organization(owner);
    orgId = org.id;
    token = org.teams[0].api_token;
    dest = await createDestinationDatabase('latedest', DEST_PASSWORD);
    destination = new pg.Client({ connectionString: dest.url });
    await destination.connect();
  });

  afterAll(async () => {
    await destination?.end();
    await t?.close();
    await s3?.close();
    if (dest) await dropDestinationDatabase(dest.name);
  });

  it('a capture still open when its interval ends reaches Postgres, S3 and HTTP exactly once, by a later scheduled run', async () => {
    // Persons are stamped by the database's clock: the service's clock follows it here, 5-minute intervals.
    let now = Date.now();
    let end = Math.ceil(now / STEP_MS) * STEP_MS;
    if (end - now < 15_000) {
      // Too close to the boundary for the capture below to start inside the interval: take the next one.
      await new Promise((resolve) => setTimeout(resolve, end - now + 1000));
      now = Date.now();
      end = Math.ceil(now / STEP_MS) * STEP_MS;
    }
    const at = (ms: number) => new Date(ms);
    t.clock.set(at(now));
    const receiver = await startHttpReceiver();
    try {
      const exports: Record<string, { id: string; model: string; kind: string }> = {};
      for (const model of ['sessions', 'persons']) {
        const destinations = {
          Postgres: { type: 'Postgres', config: pgConfig(`late_${model}`) },
          S3: {
            type: 'S3Compatible',
            config: {
              bucket_name: BUCKET,
              region: 'us-east-1',
              prefix: `late/${model}`,
              aws_access_key_id: 'S3RVER',
              aws_secret_access_key: 'S3RVER',
              endpoint_url: s3.endpoint,
              file_format: 'JSONLines',
              compression: 'gzip',
            },
          },
          HTTP: { type: 'HTTP', config: { url: `${receiver.url}${model}`, token: 'tok' } },
        };
        for (const [kind, destination] of Object.entries(destinations)) {
          const { id } = await create({
            name: `Late ${model} ${kind}`,
            model,
            interval: 'every 5 minutes',
            destination,
          });
          exports[id] = { id, model, kind };
        }
      }

      // A capture whose transaction stays open across the interval's end: it writes the person, then waits
      // for the recordings table (held by this connection) until after the interval's runs have read.
      const holder = new pg.Client({ connectionString: t.databaseUrl });
      await holder.connect();
      const sessionId = newSessionId('late');
      let captured: Promise<unknown> | undefined;
      try {
        await beginAsService(holder);
        await holder.query('LOCK TABLE session_recordings IN SHARE ROW EXCLUSIVE MODE');
        t.clock.set(at(end - 2000));
        captured = capture(sessionId, 'late-visitor', [
          rr.meta(end - 4000, 'https://shop.example/'),
          rr.full(end - 3999),
          rr.click(end - 3000),
        ]);
        await waitFor(async () => {
          const { rows } = await holder.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_locks
              WHERE NOT granted AND relation = 'session_recordings'::regclass`,
          );
          return rows[0].n > 0 ? true : undefined;
        });

        // The interval ends; the scheduler creates its runs, which read nothing of the open capture.
        t.clock.set(at(end + 1000));
        for (const e of Object.values(exports)) {
          const [first] = await waitForRunsToEnd(t.http, owner.auth, orgId, e.id, 1);
          expect([e.kind, e.model, first.status, first.records_completed]).toEqual([
            e.kind,
            e.model,
            'Completed',
            0,
          ]);
        }
        await holder.query('COMMIT');
        await captured;
      } finally {
        await holder.query('ROLLBACK').catch(() => undefined);
        await holder.end();
        await captured?.catch(() => undefined);
      }

      // The next intervals end. The write is read by the first run created after it committed.
      const runs = new Map<string, ApiRun[]>();
      let k = 1;
      await waitFor(
        async () => {
          for (const e of Object.values(exports)) {
            runs.set(e.id, await waitForRunsToEnd(t.http, owner.auth, orgId, e.id, k));
          }
          const delivered = [...runs.values()].every((list) =>
            list.some((r) => (r.records_completed ?? 0) > 0),
          );
          if (delivered || k >= 4) return true;
          k++;
          t.clock.set(at(end + (k - 1) * STEP_MS + 1000));
          return undefined;
        },
        90_000,
        'the late capture to be exported',
      );
      for (const [id, list] of runs) {
        expect([exports[id].kind, exports[id].model, list.map((r) => r.status)]).toEqual([
          exports[id].kind,
          exports[id].model,
          Array(list.length).fill('Completed'),
        ]);
        // Exactly one run delivered it, one record, and not the interval's own run.
        expect(list.map((r) => r.records_completed)).toEqual(
          list.map((_, i) => (i === list.length - 1 ? 1 : 0)),
        );
      }
      // The range of transaction ids each run read continues the previous one's.
      const ranges: { batch_export_id: string; read_xid_from: string | null; read_xid_to: string }[] =
        await t.dataSource.query(
          `SELECT batch_export_id, read_xid_from::text, read_xid_to::text FROM batch_export_runs
            ORDER BY batch_export_id, data_interval_start`,
        );
      for (const id of Object.keys(exports)) {
        const own = ranges.filter((r) => r.batch_export_id === id);
        expect(own.map((r) => r.read_xid_from)).toEqual([
          null,
          ...own.slice(0, -1).map((r) => r.read_xid_to),
        ]);
      }
      const delivering = runs.values().next().value as ApiRun[];
      const insertedAt = delivering.at(-1)!.data_interval_start;

      // Postgres: one row each, `_inserted_at` the start of the run that read it.
      const sessions = await destination.query(
        'SELECT session_id, click_count, _inserted_at FROM late_sessions',
      );
      expect(sessions.rows).toEqual([
        { session_id: sessionId, click_count: 1, _inserted_at: new Date(insertedAt) },
      ]);
      const persons = await destination.query('SELECT distinct_id, _inserted_at FROM late_persons');
      expect(persons.rows).toEqual([{ distinct_id: 'late-visitor', _inserted_at: new Date(insertedAt) }]);

      // S3: one record in all the objects of each export.
      expect((await s3Records('late/sessions')).map((r) => [r.session_id, r._inserted_at])).toEqual([
        [sessionId, new Date(insertedAt).toISOString()],
      ]);
      expect((await s3Records('late/persons')).map((r) => r.distinct_id)).toEqual(['late-visitor']);

      // HTTP: one record in all the bodies of each export.
      const posted = (model: string) =>
        receiver.received.filter((b) => b.path === `/batch/${model}`).flatMap((b) => b.body.batch);
      expect(posted('sessions').map((r) => r.session_id)).toEqual([sessionId]);
      expect(posted('persons').map((r) => r.distinct_id)).toEqual(['late-visitor']);
    } finally {
      await receiver.close();
    }
  }, 120_000);
  it('writes committed late into the last interval before a pause are read by the first run after it, once; the paused interval is left to a backfill', async () => {
    // Events and persons are stamped by the database's clock, recordings by the service's (which follows it
    // here): every database stamp below falls before `end`, so the margin must cover the test's first steps.
    let now = Date.now();
    let end = Math.ceil(now / STEP_MS) * STEP_MS;
    if (end - now < 40_000) {
      await new Promise((resolve) => setTimeout(resolve, end - now + 1000));
      now = Date.now();
      end = Math.ceil(now / STEP_MS) * STEP_MS;
    }
    const at = (ms: number) => new Date(ms);
    const iso = (ms: number) => new Date(ms).toISOString();
    t.clock.set(at(now));
    // A project of its own: the other test's writes fall in the same intervals.
    const mine = await t.factories.organization(owner);
    const myPath = (rest: string) => `/api/organizations/${mine.id}/batch_exports${rest}`;
    const myToken = mine.teams[0].api_token;
    const models = ['events', 'persons', 'sessions'] as const;
    const exports: Record<(typeof models)[number], string> = { events: '', persons: '', sessions: '' };
    for (const model of models) {
      const created = await t.http
        .post(myPath(''))
        .set(owner.auth)
        .send({
          name: `Gap ${model}`,
          model,
          interval: 'every 5 minutes',
          destination: { type: 'Postgres', config: pgConfig(`gap_${model}`) },
        })
        .expect(201);
      exports[model] = (created.body as { id: string }).id;
    }
    const endedRuns = (model: (typeof models)[number], count: number) =>
      waitForRunsToEnd(t.http, owner.auth, mine.id, exports[model], count, 60_000);
    const pause = (id: string, action: 'pause' | 'unpause') =>
      t.http
        .post(myPath(`/${id}/${action}`))
        .set(owner.auth)
        .expect(200);
    const captureRecording = (sessionId: string, events: Rrweb[]) =>
      t.http
        .post('/s/')
        .send([snapshotEvent({ token: myToken, sessionId, distinctId: 'gap-visitor', events })])
        .expect(200);

    // The day's events partition exists before the events table is held (an event of another project).
    await t.http
      .post('/batch/')
      .send({
        api_key: token,
        batch: [{ uuid: randomUUID(), event: 'warm', distinct_id: 'w', timestamp: iso(end - 8000) }],
      })
      .expect(200);

    // A recording (its person first) and 5 events whose capture stays open across the interval's end: both
    // wait for their table, held by this connection, until after the interval's runs have read.
    const holder = new pg.Client({ connectionString: t.databaseUrl });
    await holder.connect();
    const sessionId = newSessionId('gap');
    const uuids = Array.from({ length: 5 }, () => randomUUID());
    let captured: Promise<unknown> | undefined;
    try {
      await beginAsService(holder);
      await holder.query('LOCK TABLE session_recordings, events IN SHARE ROW EXCLUSIVE MODE');
      t.clock.set(at(end - 2000));
      captured = Promise.all([
        captureRecording(sessionId, [
          rr.meta(end - 4000, 'https://shop.example/'),
          rr.full(end - 3999),
          rr.click(end - 3000),
        ]),
        t.http
          .post('/batch/')
          .send({
            api_key: myToken,
            batch: uuids.map((uuid) => ({
              uuid,
              event: 'gap event',
              distinct_id: 'gap-event-visitor',
              timestamp: iso(end - 8000),
            })),
          })
          .expect(200),
      ]);
      await waitFor(async () => {
        const { rows } = await holder.query<{ n: number }>(
          `SELECT count(DISTINCT relation)::int AS n FROM pg_locks
            WHERE NOT granted AND relation IN ('session_recordings'::regclass, 'events'::regclass)`,
        );
        return rows[0].n === 2 ? true : undefined;
      });

      // The interval ends: its runs read nothing of the open captures. Then the exports are paused.
      t.clock.set(at(end + 1000));
      for (const model of models) {
        const [first] = await endedRuns(model, 1);
        expect([model, first.status, first.records_completed]).toEqual([model, 'Completed', 0]);
      }
      t.clock.set(at(end + 1500));
      for (const model of models) await pause(exports[model], 'pause');
      await holder.query('COMMIT');
      await captured;
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
      await captured?.catch(() => undefined);
    }
    // A recording stamped within the paused interval: a backfill's, not the next scheduled run's.
    const pausedSessionId = newSessionId('paused');
    t.clock.set(at(end + 120_000));
    await captureRecording(pausedSessionId, [
      rr.meta(end + 110_000, 'https://shop.example/paused'),
      rr.full(end + 110_001),
    ]);

    // The paused interval ends without a run; after the unpause the next interval ends.
    t.clock.set(at(end + STEP_MS + 1000));
    await new Promise((resolve) => setTimeout(resolve, 2500));
    t.clock.set(at(end + STEP_MS + 60_000));
    for (const model of models) await pause(exports[model], 'unpause');
    t.clock.set(at(end + 2 * STEP_MS + 1000));
    const expected = { events: 5, persons: 2, sessions: 1 };
    for (const model of models) {
      const runs = await endedRuns(model, 2);
      expect([model, runs.map((r) => [r.data_interval_start, r.status, r.records_completed])]).toEqual([
        model,
        [
          [iso(end - STEP_MS), 'Completed', 0],
          [iso(end + STEP_MS), 'Completed', expected[model]],
        ],
      ]);
    }
    // The run after the gap continued the ids of the run before it, its late reads stamped before the gap.
    const chain: { read_xid_from: string | null; read_xid_to: string; read_late_before: Date | null }[] =
      await t.dataSource.query(
        `SELECT read_xid_from::text, read_xid_to::text, read_late_before FROM batch_export_runs
          WHERE batch_export_id = $1 ORDER BY data_interval_start`,
        [exports.events],
      );
    expect(chain.map((r) => [r.read_xid_from, r.read_late_before?.toISOString() ?? null])).toEqual([
      [null, null],
      [chain[0].read_xid_to, iso(end)],
    ]);

    // The interval after reads none of them again.
    t.clock.set(at(end + 3 * STEP_MS + 1000));
    for (const model of models) {
      const runs = await endedRuns(model, 3);
      expect([model, runs[2].status, runs[2].records_completed]).toEqual([model, 'Completed', 0]);
    }

    // The backfill of the paused interval reads what is stamped within it: the paused recording only.
    for (const model of models) {
      await t.http
        .post(myPath(`/${exports[model]}/backfill`))
        .set(owner.auth)
        .send({ start_at: iso(end), end_at: iso(end + STEP_MS) })
        .expect(200);
    }
    const backfilled = { events: 0, persons: 0, sessions: 1 };
    for (const model of models) {
      const runs = await endedRuns(model, 4);
      const backfill = runs.find((r) => r.backfill)!;
      expect([model, backfill.data_interval_start, backfill.status, backfill.records_completed]).toEqual([
        model,
        iso(end),
        'Completed',
        backfilled[model],
      ]);
    }

    // Each destination holds every row once.
    const events = await destination.query<{ uuid: string }>('SELECT uuid FROM gap_events ORDER BY uuid');
    expect(events.rows.map((r) => r.uuid)).toEqual([...uuids].sort());
    const persons = await destination.query<{ distinct_id: string }>(
      'SELECT distinct_id FROM gap_persons ORDER BY distinct_id',
    );
    expect(persons.rows.map((r) => r.distinct_id)).toEqual(['gap-event-visitor', 'gap-visitor']);
    const sessions = await destination.query<{ session_id: string; _inserted_at: Date }>(
      'SELECT session_id, _inserted_at FROM gap_sessions',
    );
    // Read late, the held recording's `_inserted_at` is the start of the run that read it; the backfill's
    // its own stamp (the service's clock when it was captured).
    expect(
      Object.fromEntries(sessions.rows.map((r) => [r.session_id, r._inserted_at.toISOString()])),
    ).toEqual({ [sessionId]: iso(end + STEP_MS), [pausedSessionId]: iso(end + 120_000) });
  }, 120_000);
  it('after a change to a longer interval, the overlapping interval reads the late writes once and nothing read before again', async () => {
    const HOUR_MS = 3600_000;
    let now = Date.now();
    let end = Math.ceil(now / STEP_MS) * STEP_MS;
    if (end - now < 40_000) {
      await new Promise((resolve) => setTimeout(resolve, end - now + 1000));
      now = Date.now();
      end = Math.ceil(now / STEP_MS) * STEP_MS;
    }
    // The first hourly interval ending after `end` holds the 5-minute interval before it (unless `end` is on
    // the hour: then it follows it).
    const hourEnd = Math.floor(end / HOUR_MS) * HOUR_MS + HOUR_MS;
    const at = (ms: number) => new Date(ms);
    const iso = (ms: number) => new Date(ms).toISOString();
    t.clock.set(at(now));
    const mine = await t.factories.organization(owner);
    const myPath = (rest: string) => `/api/organizations/${mine.id}/batch_exports${rest}`;
    const myToken = mine.teams[0].api_token;
    const models = ['events', 'persons', 'sessions'] as const;
    const exports: Record<(typeof models)[number], string> = { events: '', persons: '', sessions: '' };
    for (const model of models) {
      const created = await t.http
        .post(myPath(''))
        .set(owner.auth)
        .send({
          name: `Longer ${model}`,
          model,
          interval: 'every 5 minutes',
          destination: { type: 'Postgres', config: pgConfig(`longer_${model}`) },
        })
        .expect(201);
      exports[model] = (created.body as { id: string }).id;
    }
    const endedRuns = (model: (typeof models)[number], count: number) =>
      waitForRunsToEnd(t.http, owner.auth, mine.id, exports[model], count, 60_000);
    const captureRecording = (sessionId: string, distinctId: string, events: Rrweb[]) =>
      t.http
        .post('/s/')
        .send([snapshotEvent({ token: myToken, sessionId, distinctId, events })])
        .expect(200);
    const captureEvents = (uuids: string[], distinctId: string) =>
      t.http
        .post('/batch/')
        .send({
          api_key: myToken,
          batch: uuids.map((uuid) => ({
            uuid,
            event: 'longer',
            distinct_id: distinctId,
            timestamp: iso(end - 8000),
          })),
        })
        .expect(200);

    // Committed before the interval's runs: read by them.
    t.clock.set(at(end - 10_000));
    const earlySession = newSessionId('early');
    const earlyEvent = randomUUID();
    await captureRecording(earlySession, 'early-visitor', [
      rr.meta(end - 12_000, 'https://shop.example/'),
      rr.full(end - 11_999),
    ]);
    await captureEvents([earlyEvent], 'early-visitor');

    const holder = new pg.Client({ connectionString: t.databaseUrl });
    await holder.connect();
    const lateSession = newSessionId('longer');
    const lateEvents = Array.from({ length: 5 }, () => randomUUID());
    let captured: Promise<unknown> | undefined;
    try {
      await beginAsService(holder);
      await holder.query('LOCK TABLE session_recordings, events IN SHARE ROW EXCLUSIVE MODE');
      t.clock.set(at(end - 2000));
      captured = Promise.all([
        captureRecording(lateSession, 'late-visitor', [
          rr.meta(end - 4000, 'https://shop.example/'),
          rr.full(end - 3999),
        ]),
        captureEvents(lateEvents, 'late-event-visitor'),
      ]);
      await waitFor(async () => {
        const { rows } = await holder.query<{ n: number }>(
          `SELECT count(DISTINCT relation)::int AS n FROM pg_locks
            WHERE NOT granted AND relation IN ('session_recordings'::regclass, 'events'::regclass)`,
        );
        return rows[0].n === 2 ? true : undefined;
      });
      t.clock.set(at(end + 1000));
      for (const model of models) {
        const [first] = await endedRuns(model, 1);
        // The on-time row, or none when a transaction of this database (the service's own background work) was
        // open since before it committed: then the next run reads it.
        expect([model, first.status]).toEqual([model, 'Completed']);
        expect([0, 1]).toContain(first.records_completed);
      }
      // The schedule changes to hourly before the captures commit.
      t.clock.set(at(end + 1500));
      for (const model of models) {
        await t.http
          .patch(myPath(`/${exports[model]}`))
          .set(owner.auth)
          .send({ interval: 'hour' })
          .expect(200);
      }
      await holder.query('COMMIT');
      await captured;
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
      await captured?.catch(() => undefined);
    }

    t.clock.set(at(hourEnd + 1000));
    const expected = { events: 5, persons: 2, sessions: 1 };
    for (const model of models) {
      const runs = (await endedRuns(model, 2)).sort((a, b) =>
        a.data_interval_end.localeCompare(b.data_interval_end),
      );
      expect([model, runs.map((r) => [r.data_interval_end, r.status])]).toEqual([
        model,
        [
          [iso(end), 'Completed'],
          [iso(hourEnd), 'Completed'],
        ],
      ]);
      // Every row read once: the on-time one by the first run (or, delayed as above, by the second).
      expect([model, (runs[0].records_completed ?? 0) + (runs[1].records_completed ?? 0)]).toEqual([
        model,
        1 + expected[model],
      ]);
    }
    // Each destination holds every row once (a Postgres table keeps one row per key: counted by the runs).
    const events = await destination.query<{ uuid: string }>('SELECT uuid FROM longer_events ORDER BY uuid');
    expect(events.rows.map((r) => r.uuid)).toEqual([earlyEvent, ...lateEvents].sort());
    const sessions = await destination.query<{ session_id: string }>(
      'SELECT session_id FROM longer_sessions ORDER BY session_id',
    );
    expect(sessions.rows.map((r) => r.session_id)).toEqual([earlySession, lateSession].sort());
  }, 120_000);
});
