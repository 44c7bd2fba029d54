import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { SchedulerRegistry } from '@nestjs/schedule';
import { runCli } from '../../src/cli-dispatch.js';
import { RecordingPurgeScheduler } from '../../src/session-recordings/retention/recording-purge.scheduler.js';
import { RecordingRetentionRepository } from '../../src/session-recordings/retention/recording-retention.repository.js';
import { RecordingRetentionService } from '../../src/session-recordings/retention/recording-retention.service.js';
import { SnapshotObjectStore } from '../../src/session-recordings/storage/snapshot-object-store.js';
import { startS3Server } from '../support/batch-export-runs.js';
import { startS3rver, type RunningS3rver } from '../support/s3rver.js';
import { createTestApp, type TestApp } from '../support/create-test-app.js';
import { NOT_FOUND } from '../support/expectations.js';
import type { TestUser } from '../support/factories.js';
import { newSessionId, rr, snapshotEvent } from '../support/recordings.js';

/** When the test's clock stands unless a test moves it. */
const NOW = new Date('2026-11-21T12:00:00.000Z');
const DAY = 24 * 60 * 60 * 1000;
/** Cutoff of a 7-day project at NOW: the start of 2026-11-15 (UTC). */
const CUTOFF_7 = Date.parse('2026-11-15T00:00:00.000Z');
const BUCKET = 'retention-recordings';
const RANGE = 'Must be an integer between 1 and 3650, or null.';

interface Project {
  id: number;
  token: string;
}

describe('recording retention', () => {
  let t: TestApp;
  let s3: RunningS3rver;
  let owner: TestUser;
  let retention: RecordingRetentionService;
  let store: SnapshotObjectStore;
  let projectCount = 0;

  const path = (project: Project, rest = '') => `/api/projects/${project.id}/session_recordings${rest}`;

  /** A new organization's project, with its capture token. */
  async function newProject(): Promise<Project> {
    const org = await t.factories.organization(owner, `Retention ${++projectCount}`);
    return { id: org.teams[0].id, token: org.teams[0].api_token };
  }

  /** A recording of `project` that started at `startMs`: two events, each with its own event key. */
  async function record(project: Project, startMs: number, label = 'r'): Promise<string> {
    const sessionId = newSessionId(label);
    await t.http
      .post('/s/')
      .send([
        snapshotEvent({
          token: project.token,
          sessionId,
          events: [rr.meta(startMs, 'https://retention.example.com/'), rr.click(startMs + 1000)],
        }),
      ])
      .expect(200);
    return sessionId;
  }

  const setRetention = (project: Project, days: unknown) =>
    t.http
      .patch(`/api/projects/${project.id}`)
      .set(owner.auth)
      .send({ session_recording_retention_period_days: days });

  /** Enables sharing of a recording; returns its access token. */
  async function share(project: Project, sessionId: string): Promise<string> {
    const res = await t.http
      .patch(path(project, `/${sessionId}/sharing`))
      .set(owner.auth)
      .send({ enabled: true })
      .expect(200);
    return (res.body as { access_token: string }).access_token;
  }

  /** Rows of a recording in every table that holds some of it. */
  async function rowsOf(sessionId: string): Promise<Record<string, number>> {
    const [row] = await t.dataSource.query(
      `SELECT (SELECT count(*)::int FROM session_recordings WHERE session_id = $1) AS recordings,
              (SELECT count(*)::int FROM session_recording_snapshots WHERE session_id = $1) AS snapshots,
              (SELECT count(*)::int FROM session_recording_event_keys WHERE session_id = $1) AS event_keys,
              (SELECT count(*)::int FROM session_recording_views WHERE session_id = $1) AS views,
              (SELECT count(*)::int FROM session_recording_sharing WHERE session_id = $1) AS sharing`,
      [sessionId],
    );
    return row as Record<string, number>;
  }

  /** Gives a recording a view and a sharing row too, so a purge has every table to clear. */
  async function viewAndShare(project: Project, sessionId: string): Promise<void> {
    await t.http
      .patch(path(project, `/${sessionId}`))
      .set(owner.auth)
      .send({ viewed: true })
      .expect(200);
    await share(project, sessionId);
    expect(await rowsOf(sessionId)).toEqual({
      recordings: 1,
      snapshots: 1,
      event_keys: 1,
      views: 1,
      sharing: 1,
    });
  }

  const listOf = async (project: Project, query = '') =>
    (
      await t.http
        .get(`${path(project)}?limit=100${query}`)
        .set(owner.auth)
        .expect(200)
    ).body as {
      count: number;
      results: { id: string; retention_period_days: number; expiry_time: string; recording_ttl: number }[];
    };

  const counter = async (project: Project) =>
    Number(
      (
        await t.dataSource.query('SELECT recordings FROM session_recording_counts WHERE team_id = $1', [
          project.id,
        ])
      )[0]?.recordings ?? 0,
    );

  beforeAll(async () => {
    s3 = await startS3rver([BUCKET]);
    t = await createTestApp({
      RECORDING_PURGE_BATCH_SIZE: '2',
      RECORDING_S3_BUCKET: BUCKET,
      RECORDING_S3_ENDPOINT: s3.endpoint,
    });
    t.clock.set(NOW);
    owner = await t.factories.user();
    retention = t.app.get(RecordingRetentionService);
    store = t.app.get(SnapshotObjectStore);
  });
  afterAll(async () => {
    await t?.close();
    await s3?.close();
  });
  beforeEach(() => {
    t.clock.set(NOW);
  });

  describe('the project setting', () => {
    it('is null by default; PATCH sets it, null clears it, leaving it out keeps it', async () => {
      const project = await newProject();
      const initial = await t.http.get(`/api/projects/${project.id}`).set(owner.auth).expect(200);
      expect(initial.body.session_recording_retention_period_days).toBeNull();

      const set = await setRetention(project, 90).expect(200);
      expect(set.body).toEqual({
        ...initial.body,
        session_recording_retention_period_days: 90,
        updated_at: expect.any(String),
      });
      const read = await t.http.get(`/api/projects/${project.id}`).set(owner.auth).expect(200);
      expect(read.body.session_recording_retention_period_days).toBe(90);
      const kept = await t.http
        .patch(`/api/projects/${project.id}`)
        .set(owner.auth)
        .send({ name: 'Renamed' })
        .expect(200);
      expect(kept.body.session_recording_retention_period_days).toBe(90);
      for (const days of [1, 3650]) {
        expect(
          (await setRetention(project, days).expect(200)).body.session_recording_retention_period_days,
        ).toBe(days);
      }

      const cleared = await setRetention(project, null).expect(200);
      expect(cleared.body.session_recording_retention_period_days).toBeNull();
      const [row] = await t.dataSource.query(
        'SELECT session_recording_retention_period_days AS days FROM projects WHERE id = $1',
        [project.id],
      );
      expect(row).toEqual({ days: null });
    });

    it('400 naming the field for anything but an integer 1-3650 or null; nothing changes', async () => {
      const project = await newProject();
      await setRetention(project, 14).expect(200);
      for (const bad of [0, -1, 3651, 1.5, '30', true, [30], { days: 30 }]) {
        const res = await setRetention(project, bad);
        expect({ sent: bad, status: res.status, body: res.body }).toEqual({
          sent: bad,
          status: 400,
          body: {
            type: 'validation_error',
            code: 'invalid_input',
            detail: RANGE,
            attr: 'session_recording_retention_period_days',
          },
        });
      }
      const read = await t.http.get(`/api/projects/${project.id}`).set(owner.auth).expect(200);
      expect(read.body.session_recording_retention_period_days).toBe(14);
    });

    it('is refused to a key without project:write (403)', async () => {
      const project = await newProject();
      const readOnly = await t.factories.keyFor(owner, 'project:read');
      await t.http
        .patch(`/api/projects/${project.id}`)
        .set(readOnly)
        .send({ session_recording_retention_period_days: 7 })
        .expect(403);
      const read = await t.http.get(`/api/projects/${project.id}`).set(owner.auth).expect(200);
      expect(read.body.session_recording_retention_period_days).toBeNull();
    });
  });

  describe('expiry fields', () => {
    it("follow the project's setting in the list, retrieve and the shared view", async () => {
      const project = await newProject();
      const sessionId = await record(project, Date.parse('2026-11-20T09:00:00.000Z'));
      const accessToken = await share(project, sessionId);
      const fields = async () => {
        const retrieved = (
          await t.http
            .get(path(project, `/${sessionId}`))
            .set(owner.auth)
            .expect(200)
        ).body;
        const listed = (await listOf(project)).results.find((r) => r.id === sessionId);
        const shared = (await t.http.get(`/api/shared/${accessToken}`).expect(200)).body;
        const pick = (r: Record<string, unknown> | undefined) => ({
          retention_period_days: r?.retention_period_days,
          expiry_time: r?.expiry_time,
          recording_ttl: r?.recording_ttl,
        });
        expect(pick(listed)).toEqual(pick(retrieved));
        expect(pick(shared)).toEqual(pick(retrieved));
        return pick(retrieved);
      };
      expect(await fields()).toEqual({
        retention_period_days: 30,
        expiry_time: '2026-12-20T00:00:00.000Z',
        recording_ttl: 29,
      });
      await setRetention(project, 7).expect(200);
      expect(await fields()).toEqual({
        retention_period_days: 7,
        expiry_time: '2026-11-27T00:00:00.000Z',
        recording_ttl: 6,
      });
      await setRetention(project, 365).expect(200);
      expect(await fields()).toEqual({
        retention_period_days: 365,
        expiry_time: '2027-11-20T00:00:00.000Z',
        recording_ttl: 364,
      });
    });
  });

  describe('an expired recording', () => {
    it('is gone from list, count, retrieve, snapshots, sharing and the shared path at once; a live one stays', async () => {
      const project = await newProject();
      const old = await record(project, CUTOFF_7 - 60 * 60 * 1000, 'old');
      const fresh = await record(project, CUTOFF_7, 'fresh');
      const accessToken = await share(project, old);
      const freshToken = await share(project, fresh);
      await t.http.get(`/api/shared/${accessToken}`).expect(200);
      const before = await listOf(project);
      expect(before.count).toBe(2);
      expect(before.results.map((r) => r.id).sort()).toEqual([fresh, old].sort());

      await setRetention(project, 7).expect(200);
      const gone: [string, () => Promise<{ status: number; body: unknown }>][] = [
        ['retrieve', () => t.http.get(path(project, `/${old}`)).set(owner.auth)],
        ['snapshots', () => t.http.get(path(project, `/${old}/snapshots`)).set(owner.auth)],
        ['sharing', () => t.http.get(path(project, `/${old}/sharing`)).set(owner.auth)],
        [
          'sharing update',
          () =>
            t.http
              .patch(path(project, `/${old}/sharing`))
              .set(owner.auth)
              .send({ enabled: false }),
        ],
        ['sharing refresh', () => t.http.post(path(project, `/${old}/sharing/refresh`)).set(owner.auth)],
        [
          'update',
          () =>
            t.http
              .patch(path(project, `/${old}`))
              .set(owner.auth)
              .send({ viewed: true }),
        ],
        ['delete', () => t.http.delete(path(project, `/${old}`)).set(owner.auth)],
        ['shared', () => t.http.get(`/api/shared/${accessToken}`)],
        ['shared snapshots', () => t.http.get(`/api/shared/${accessToken}/snapshots`)],
      ];
      for (const [what, call] of gone) {
        const res = await call();
        expect({ what, status: res.status, body: res.body }).toEqual({ what, status: 404, body: NOT_FOUND });
      }
      const after = await listOf(project);
      expect(after.count).toBe(1);
      expect(after.results.map((r) => r.id)).toEqual([fresh]);
      // Filtered lists count over the same conditions.
      const filtered = await listOf(project, '&distinct_id=visitor-1');
      expect([filtered.count, filtered.results.map((r) => r.id)]).toEqual([1, [fresh]]);
      const sinceOld = await listOf(project, `&date_from=${new Date(CUTOFF_7 - DAY).toISOString()}`);
      expect([sinceOld.count, sinceOld.results.map((r) => r.id)]).toEqual([1, [fresh]]);
      // The live one, started exactly at the cutoff, is all there.
      await t.http
        .get(path(project, `/${fresh}`))
        .set(owner.auth)
        .expect(200);
      await t.http
        .get(path(project, `/${fresh}/snapshots`))
        .set(owner.auth)
        .expect(200);
      await t.http.get(`/api/shared/${freshToken}`).expect(200);
      await t.http.get(`/api/shared/${freshToken}/snapshots`).expect(200);
      // Nothing is deleted yet: the rows wait for the purge; a longer retention shows the recording again.
      expect((await rowsOf(old)).recordings).toBe(1);
      await setRetention(project, null).expect(200);
      await t.http
        .get(path(project, `/${old}`))
        .set(owner.auth)
        .expect(200);
      expect((await listOf(project)).count).toBe(2);

      // Time passing expires recordings too: at the next midnight (UTC) the 7-day cutoff moves a day on.
      await setRetention(project, 7).expect(200);
      t.clock.set(new Date('2026-11-21T23:59:59.999Z'));
      await t.http
        .get(path(project, `/${fresh}`))
        .set(owner.auth)
        .expect(200);
      t.clock.set(new Date('2026-11-22T00:00:00.000Z'));
      await t.http
        .get(path(project, `/${fresh}`))
        .set(owner.auth)
        .expect(404);
      await t.http.get(`/api/shared/${freshToken}`).expect(404);
      expect(await listOf(project)).toEqual(expect.objectContaining({ count: 0, results: [] }));
    });
  });

  describe('the purge', () => {
    it('deletes exactly the expired recordings, everything of theirs, in batches; others and counts stay right', async () => {
      await retention.purgeExpired(); // whatever earlier tests left expired
      const short = await newProject();
      const long = await newProject();
      // Viewed and shared while the project keeps 30 days; then it keeps 7, and they have expired.
      const expired: string[] = [];
      for (let i = 0; i < 4; i++) {
        const id = await record(short, CUTOFF_7 - (i + 1) * DAY, 'expired');
        await viewAndShare(short, id);
        expired.push(id);
      }
      // Soft-deleted and expired: purged too.
      const deleted = await record(short, CUTOFF_7 - DAY, 'deleted');
      await t.http
        .delete(path(short, `/${deleted}`))
        .set(owner.auth)
        .expect(204);
      expired.push(deleted);
      const live = await record(short, CUTOFF_7, 'live');
      await viewAndShare(short, live);
      // Same start as an expired one, in a project keeping 30 days: not expired.
      const kept = await record(long, CUTOFF_7 - DAY, 'kept');
      await viewAndShare(long, kept);
      await setRetention(short, 7).expect(200);
      expect(await counter(short)).toBe(5);

      // One batch: at most RECORDING_PURGE_BATCH_SIZE (2) recordings.
      const first = await retention.purgeBatch();
      expect(first).toEqual({ recordings: 2, snapshotChunks: 2, objects: 0, objectsLeft: 0, batches: 1 });
      const rest = await retention.purgeExpired();
      expect(rest).toEqual({ recordings: 3, snapshotChunks: 3, objects: 0, objectsLeft: 0, batches: 2 });
      expect(await retention.purgeBatch()).toEqual({
        recordings: 0,
        snapshotChunks: 0,
        objects: 0,
        objectsLeft: 0,
        batches: 0,
      });

      for (const id of expired) {
        expect({ id, rows: await rowsOf(id) }).toEqual({
          id,
          rows: { recordings: 0, snapshots: 0, event_keys: 0, views: 0, sharing: 0 },
        });
      }
      for (const id of [live, kept]) {
        expect({ id, rows: await rowsOf(id) }).toEqual({
          id,
          rows: { recordings: 1, snapshots: 1, event_keys: 1, views: 1, sharing: 1 },
        });
      }
      // The counter behind the unfiltered count lost the 4 live expired ones (the soft-deleted one was not in it).
      expect(await counter(short)).toBe(1);
      expect(await counter(long)).toBe(1);
      expect((await listOf(short)).count).toBe(1);
      expect((await listOf(long)).count).toBe(1);
      // A recording the purge deleted comes back only as a new recording, if capture receives it again.
      await t.http
        .get(path(short, `/${expired[0]}`))
        .set(owner.auth)
        .expect(404);
    });

    it('purgeBatch starts at the project of its previous batch, and still reaches the projects before it', async () => {
      await retention.purgeExpired();
      const before = await newProject();
      const after = await newProject();
      for (let i = 0; i < 2; i++) await record(before, CUTOFF_7 - (i + 1) * DAY, 'resume-before');
      for (let i = 0; i < 3; i++) await record(after, CUTOFF_7 - (i + 1) * DAY, 'resume-after');
      await setRetention(after, 7).expect(200);
      // The projects each call looks at (the repository's own statement, counted on its way).
      const repository = t.app.get(RecordingRetentionRepository);
      const candidates = repository.expiredCandidates.bind(repository);
      let looked: number[] = [];
      repository.expiredCandidates = (teamId, ...rest) => {
        looked.push(teamId);
        return candidates(teamId, ...rest);
      };
      try {
        const batch = async () => {
          looked = [];
          return (await retention.purgeBatch()).recordings;
        };
        expect(await batch()).toBe(2);
        expect(looked).toContain(after.id);
        // Now `before`'s recordings expire too; the next batch starts at `after`, where one is left.
        await setRetention(before, 7).expect(200);
        expect(await batch()).toBe(1);
        expect(looked).toEqual([after.id]);
        // `after` has none left: on to the projects after it, then from the first, to `before`.
        expect(await batch()).toBe(2);
        expect(looked[0]).toBe(after.id);
        expect(looked[looked.length - 1]).toBe(before.id);
        expect(looked.filter((id) => id === after.id)).toHaveLength(1);
        expect(await batch()).toBe(0);
      } finally {
        repository.expiredCandidates = candidates;
      }
    });

    it('deletes the objects of chunks kept in the object store after the commit, and leaves the others', async () => {
      await retention.purgeExpired();
      const project = await newProject();
      await setRetention(project, 7).expect(200);
      const old = await record(project, CUTOFF_7 - DAY, 'object-old');
      const live = await record(project, CUTOFF_7 + DAY, 'object-live');
      // Move both chunks into the store, as `recordings migrate-storage` does: the row keeps the object key.
      const keys: Record<string, string> = {};
      for (const id of [old, live]) {
        keys[id] = store.newKey(project.id, id);
        const [{ data }] = await t.dataSource.query(
          'SELECT data FROM session_recording_snapshots WHERE session_id = $1',
          [id],
        );
        await store.put(keys[id], data as Buffer);
        await t.dataSource.query(
          'UPDATE session_recording_snapshots SET object_key = $2, data = NULL WHERE session_id = $1',
          [id, keys[id]],
        );
      }
      expect(await retention.purgeExpired()).toEqual({
        recordings: 1,
        snapshotChunks: 1,
        objects: 1,
        objectsLeft: 0,
        batches: 1,
      });
      expect(await store.get(keys[old])).toBeNull();
      expect(await store.get(keys[live])).not.toBeNull();
      expect((await rowsOf(old)).recordings).toBe(0);
      await t.http
        .get(path(project, `/${live}/snapshots`))
        .set(owner.auth)
        .expect(200);
    });

    it('deletes the rows even when the object store fails, leaving the objects to the orphan sweep', async () => {
      await retention.purgeExpired();
      const down = await startS3Server([BUCKET]);
      await down.close();
      const broken = await createTestApp(
        {
          RECORDING_S3_BUCKET: BUCKET,
          RECORDING_S3_ENDPOINT: down.endpoint,
          RECORDING_S3_TIMEOUT_MS: '500',
        },
        { databaseUrl: t.databaseUrl },
      );
      try {
        broken.clock.set(NOW);
        const project = await newProject();
        await setRetention(project, 7).expect(200);
        const old = await record(project, CUTOFF_7 - DAY, 'store-down');
        const key = store.newKey(project.id, old);
        await store.put(key, Buffer.from('chunk'));
        await t.dataSource.query(
          'UPDATE session_recording_snapshots SET object_key = $2, data = NULL WHERE session_id = $1',
          [old, key],
        );
        expect(await broken.app.get(RecordingRetentionService).purgeExpired()).toEqual({
          recordings: 1,
          snapshotChunks: 1,
          objects: 0,
          objectsLeft: 1,
          batches: 1,
        });
        expect(await rowsOf(old)).toEqual({
          recordings: 0,
          snapshots: 0,
          event_keys: 0,
          views: 0,
          sharing: 0,
        });
        // The object is still there (no row points at it any more: the orphan sweep's to remove).
        expect(await store.get(key)).toEqual(Buffer.from('chunk'));
      } finally {
        await broken.close();
      }
    });

    it('two purges at once (two replicas) delete each recording once, without errors', async () => {
      await retention.purgeExpired();
      const other = await createTestApp({ RECORDING_PURGE_BATCH_SIZE: '3' }, { databaseUrl: t.databaseUrl });
      try {
        other.clock.set(NOW);
        const projects = [await newProject(), await newProject()];
        const expired: string[] = [];
        for (const project of projects) {
          await setRetention(project, 7).expect(200);
          for (let i = 0; i < 12; i++) expired.push(await record(project, CUTOFF_7 - DAY - i * 1000, 'race'));
        }
        const [a, b] = await Promise.all([
          retention.purgeExpired(),
          other.app.get(RecordingRetentionService).purgeExpired(),
        ]);
        // Each batch stops at a short one, so a purge may leave rows the other held; a second round finishes.
        const c = await retention.purgeExpired();
        expect(a.recordings + b.recordings + c.recordings).toBe(expired.length);
        expect(a.snapshotChunks + b.snapshotChunks + c.snapshotChunks).toBe(expired.length);
        const [{ left }] = await t.dataSource.query(
          'SELECT count(*)::int AS left FROM session_recordings WHERE session_id = ANY($1)',
          [expired],
        );
        expect(left).toBe(0);
        for (const project of projects) expect(await counter(project)).toBe(0);
      } finally {
        await other.close();
      }
    });

    it('skips a recording a capture is writing into, without waiting; the next purge deletes it', async () => {
      await retention.purgeExpired();
      const project = await newProject();
      await setRetention(project, 7).expect(200);
      const held = await record(project, CUTOFF_7 - DAY, 'held');
      const free = await record(project, CUTOFF_7 - 2 * DAY, 'free');
      const runner = t.dataSource.createQueryRunner();
      await runner.connect();
      try {
        await runner.startTransaction();
        // What capture's lockSessions holds while it writes into an existing recording.
        await runner.query(
          'SELECT 1 FROM session_recordings WHERE team_id = $1 AND session_id = $2 FOR NO KEY UPDATE',
          [project.id, held],
        );
        const result = await retention.purgeExpired();
        expect(result.recordings).toBe(1);
        expect((await rowsOf(free)).recordings).toBe(0);
        expect((await rowsOf(held)).recordings).toBe(1);
        await runner.commitTransaction();
      } finally {
        await runner.release();
      }
      expect((await retention.purgeExpired()).recordings).toBe(1);
      expect((await rowsOf(held)).recordings).toBe(0);
    });

    it('waits for a capture creating recordings in the project (counter lock) without deadlocking, then purges', async () => {
      await retention.purgeExpired();
      const project = await newProject();
      await setRetention(project, 7).expect(200);
      const old = await record(project, CUTOFF_7 - DAY, 'counter');
      const runner = t.dataSource.createQueryRunner();
      await runner.connect();
      let purge: Promise<unknown> | undefined;
      try {
        await runner.startTransaction();
        // A capture of a new session and of an existing one: the counter, then the recordings, in that order.
        await runner.query(
          `INSERT INTO session_recording_counts (team_id, recordings) VALUES ($1, 0)
           ON CONFLICT (team_id) DO UPDATE SET recordings = session_recording_counts.recordings`,
          [project.id],
        );
        await runner.query(
          'SELECT 1 FROM session_recordings WHERE team_id = $1 AND session_id = $2 FOR NO KEY UPDATE',
          [project.id, old],
        );
        purge = retention.purgeExpired();
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect((await rowsOf(old)).recordings).toBe(1);
        await runner.commitTransaction();
      } finally {
        await runner.release();
      }
      expect(await purge).toEqual(expect.objectContaining({ recordings: 1, snapshotChunks: 1 }));
      expect((await rowsOf(old)).recordings).toBe(0);
    });

    it('does not hold up capture into live recordings while it deletes', async () => {
      await retention.purgeExpired();
      const project = await newProject();
      await setRetention(project, 7).expect(200);
      const live = await record(project, CUTOFF_7 + DAY, 'capture-live');
      const expired: string[] = [];
      for (let i = 0; i < 30; i++) expired.push(await record(project, CUTOFF_7 - DAY - i, 'capture-old'));
      const newSession = newSessionId('capture-new');
      const at = NOW.getTime() - 60_000;
      const [purged, ...captures] = await Promise.all([
        retention.purgeExpired(),
        t.http.post('/s/').send([
          snapshotEvent({
            token: project.token,
            sessionId: live,
            events: [rr.click(CUTOFF_7 + DAY + 5000)],
          }),
        ]),
        t.http
          .post('/s/')
          .send([snapshotEvent({ token: project.token, sessionId: newSession, events: [rr.click(at)] })]),
      ]);
      expect(captures.map((r) => r.status)).toEqual([200, 200]);
      expect(purged.recordings).toBe(30);
      expect((await rowsOf(live)).snapshots).toBe(2);
      expect((await rowsOf(newSession)).recordings).toBe(1);
      const list = await listOf(project);
      expect([list.count, list.results.map((r) => r.id).sort()]).toEqual([2, [live, newSession].sort()]);
      expect(await counter(project)).toBe(2);
    });
  });

  describe('the purge timer', () => {
    it('is not registered with RECORDING_PURGE_INTERVAL_SECONDS=0 (the tests’ default)', () => {
      expect(t.app.get(SchedulerRegistry).getIntervals()).toEqual([]);
    });

    it('is registered with an interval; a tick purges, and ticks do not overlap', async () => {
      const timed = await createTestApp(
        { RECORDING_PURGE_INTERVAL_SECONDS: '3600' },
        { databaseUrl: t.databaseUrl },
      );
      try {
        timed.clock.set(NOW);
        expect(timed.app.get(SchedulerRegistry).getIntervals()).toEqual([
          RecordingPurgeScheduler.INTERVAL_NAME,
        ]);
        await retention.purgeExpired();
        const project = await newProject();
        await setRetention(project, 7).expect(200);
        const old = await record(project, CUTOFF_7 - DAY, 'tick');
        const scheduler = timed.app.get(RecordingPurgeScheduler);
        const first = scheduler.tick();
        expect(scheduler.tick()).toBe(first);
        await first;
        expect((await rowsOf(old)).recordings).toBe(0);
      } finally {
        await timed.close();
      }
      expect(t.app.get(SchedulerRegistry).getIntervals()).toEqual([]);
    });
  });

  describe('node dist/cli.js recordings purge', () => {
    const cli = async (argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(
        argv,
        { DATABASE_URL: t.databaseUrl, LOG_LEVEL: 'silent', RECORDING_PURGE_BATCH_SIZE: '2' },
        (l) => out.push(l),
        (l) => err.push(l),
      );
      return { code, out, err };
    };

    it('purges (at the real time) until nothing is left and prints what it deleted', async () => {
      // The CLI runs on the real clock: recordings are placed relative to it.
      await cli(['recordings', 'purge']);
      const project = await newProject();
      const now = Date.now();
      const old = [
        await record(project, now - 40 * DAY, 'cli-old'),
        await record(project, now - 41 * DAY, 'cli-old'),
        await record(project, now - 42 * DAY, 'cli-old'),
      ];
      const recent = await record(project, now - DAY, 'cli-recent');
      expect(await cli(['recordings', 'purge'])).toEqual({
        code: 0,
        out: ['purged 3 expired recordings: 3 snapshot chunks, 0 stored objects, in 2 transactions'],
        err: [],
      });
      for (const id of old) expect((await rowsOf(id)).recordings).toBe(0);
      expect((await rowsOf(recent)).recordings).toBe(1);
      expect(await cli(['recordings', 'purge'])).toEqual({
        code: 0,
        out: ['nothing to purge: no recording has expired'],
        err: [],
      });
    });

    it('answers --help with its usage, and refuses options', async () => {
      const help = await cli(['recordings', 'purge', '--help']);
      expect(help.code).toBe(0);
      expect(help.out[0]).toMatch(/^Usage: npm run cli -- recordings purge\n\nDeletes every recording/);
      const bad = await cli(['recordings', 'purge', '--all']);
      expect(bad.code).toBe(2);
      expect(bad.err[0]).toMatch(/^recordings purge: Unknown option '--all'/);
    });
  });
});
