/**
 * The capture load scenarios (`capture-postgres`, `capture-s3`): many new sessions recorded at once in one
 * project, posthog-js batches POSTed to /s/ of the service and of the baseline (bench/baseline/capture.ts), with
 * snapshot chunks stored in PostgreSQL or as objects in an S3-compatible store.
 *
 * 1. a check session (its full snapshot request, its incremental requests, then its last request again) is sent
 *    to both sides; what each stored — the recording's figures, its event keys, its chunks and their
 *    decompressed lines — must be the same, else the bench stops;
 * 2. the SQL statements per request are counted on each side (pg_stat_statements);
 * 3. rounds of load, alternating which side goes first: pre-built bodies for a warm-up, then, sized from the
 *    warm-up's rate, for the measured seconds; after each measurement the recordings of that load must count
 *    exactly the events of the answered requests (nothing skipped as a duplicate, nothing lost).
 */
import type pg from 'pg';
import { CAPTURE_PATH, type CaptureLoadFigures, postCapture, runCaptureLoad } from './capture-runner.js';
import type { BenchOptions } from './options.js';
import { sampleRss, type Server } from './processes.js';
import { connectionQueues, type LoadPlan, pageDom, sessionBodies } from './recording-load.js';
import type { CaptureLoadResult, CaptureLoadStats } from './report.js';
import type { Side } from './scenarios.js';
import { type ReadObject, readStoredRecording, storedDifference } from './stored-recording.js';
import { countsBetween, NO_REQUESTS, type StoreCounts } from './store-proxy.js';
import { compareStatements, profileCaptureBodies, type StatementProfile } from './statements.js';
import { mean, meanIfEvery } from './stats.js';
import { gzipSync } from 'node:zlib';

/** Requests per second and connection the warm-up's bodies are built for (far above what a side serves). */
const WARMUP_BUDGET_PER_CONNECTION = 40;

export class CaptureScenarioSkipped extends Error {}

/** The project the capture load records into: one without seeded recordings, emptied before and after. */
export async function captureProject(
  db: pg.Client,
  organizationId: string,
): Promise<{ id: number; token: string }> {
  const { rows } = await db.query<{ id: number; api_token: string }>(
    'SELECT id, api_token FROM projects WHERE organization_id = $1 ORDER BY id LIMIT 1',
    [organizationId],
  );
  if (!rows.length) throw new Error(`organization ${organizationId} has no project`);
  return { id: rows[0].id, token: rows[0].api_token };
}

/** Removes the recordings (with their keys and chunks) and persons the capture load left in its project. */
export async function emptyCaptureProject(db: pg.Client, teamId: number): Promise<void> {
  await db.query('DELETE FROM session_recording_keys WHERE team_id = $1', [teamId]);
  await db.query('DELETE FROM session_recordings WHERE team_id = $1', [teamId]);
  await db.query('DELETE FROM persons WHERE team_id = $1', [teamId]);
}

function gzipRequests(json: unknown[][]): Buffer[] {
  return json.map((j) => gzipSync(JSON.stringify(j)));
}

/** Sends the check session to one side (its requests in order, then the last one again). */
async function sendCheckSession(url: string, bodies: Buffer[]): Promise<string> {
  let answer = '';
  for (const body of [...bodies, bodies[bodies.length - 1]]) {
    const res = await postCapture(url, body);
    if (res.status !== 200)
      throw new Error(`check request answered ${res.status}: ${res.body.slice(0, 300)}`);
    if (answer && res.body !== answer) throw new Error(`check answers differ: ${answer} / ${res.body}`);
    answer = res.body;
  }
  return answer;
}

function meanCapture(all: CaptureLoadStats[]): CaptureLoadStats {
  const sum = (f: (s: CaptureLoadStats) => number) => all.reduce((a, s) => a + f(s), 0);
  return {
    requests: sum((s) => s.requests),
    rps: mean(all.map((s) => s.rps)),
    eventsPerSec: mean(all.map((s) => s.eventsPerSec)),
    mbPerSec: mean(all.map((s) => s.mbPerSec)),
    p50: mean(all.map((s) => s.p50)),
    p99: mean(all.map((s) => s.p99)),
    errors: sum((s) => s.errors),
    cpuMsPerRequest: mean(all.map((s) => s.cpuMsPerRequest)),
    ...meanIfEvery(all, 'v8CpuMsPerRequest'),
    rssMaxMb: Math.max(...all.map((s) => s.rssMaxMb)),
    eventsSent: sum((s) => s.eventsSent),
    eventsStored: sum((s) => s.eventsStored),
    store: all.every((s) => s.store)
      ? {
          requests: all.reduce(
            (a, s) => {
              const r = (s.store as { requests: StoreCounts }).requests;
              return {
                put: a.put + r.put,
                get: a.get + r.get,
                rangedGet: a.rangedGet + r.rangedGet,
                delete: a.delete + r.delete,
                other: a.other + r.other,
              };
            },
            { ...NO_REQUESTS },
          ),
          seconds: sum((s) => (s.store as { seconds: number }).seconds),
        }
      : null,
  };
}

/**
 * Waits until no chunk of the sessions whose id starts with `prefix` waits to be packed (the service's packer
 * runs on its timer); false on timeout.
 */
async function waitPacked(
  db: pg.Client,
  teamId: number,
  prefix: string,
  timeoutMs: number,
): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM session_recording_snapshots
        WHERE team_id = $1 AND session_id LIKE $2 AND data IS NULL AND object_key IS NULL`,
      [teamId, `${prefix}%`],
    );
    if (!rows[0].n) return true;
    if (Date.now() > until) return false;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** rrweb events the recordings of one load store (session ids `<prefix>-c…`; the warm-up's prefix is another). */
export async function storedEvents(db: pg.Client, teamId: number, prefix: string): Promise<number> {
  const { rows } = await db.query<{ n: string | null }>(
    `SELECT sum(event_count)::text AS n FROM session_recordings WHERE team_id = $1 AND session_id LIKE $2`,
    [teamId, `${prefix}-c%`],
  );
  return Number(rows[0].n ?? 0);
}

export async function benchCaptureLoad(options: {
  name: string;
  description: string;
  storage: 'postgres' | 's3';
  bench: BenchOptions;
  db: pg.Client;
  statStatements: boolean;
  project: { id: number; token: string };
  servers: Record<Side, Server>;
  /** Reads an object of the bucket (the s3 variant), or a range of one, for the stored-data check. */
  readObject: ReadObject;
  /** The service's object layout with `s3`; the baseline's is per-chunk. */
  layout?: 'packed' | 'per-chunk' | null;
  /** RECORDING_KEY_ENCRYPTION_KEY of the service, to open encrypted packed chunks in the check. */
  kek?: string | null;
  /** The requests each side has sent to the object store so far (the s3 variant). */
  storeCounts?: Record<Side, () => StoreCounts> | null;
  log: (m: string) => void;
}): Promise<CaptureLoadResult> {
  const { name, bench, db, project, servers, log } = options;
  const runId = Date.now().toString(36);
  const page = pageDom();
  const plan = (prefix: string): LoadPlan => ({
    token: project.token,
    prefix,
    page,
    t0: Date.UTC(2026, 10, 21, 9),
  });

  // 1. The check session: the same events to both sides (own session and distinct ids), the same stored result.
  const check = (side: Side) =>
    sessionBodies(
      {
        token: project.token,
        sessionId: `bench-cap-${runId}-check-${side}`,
        windowId: `bench-cap-${runId}-check-window`,
        distinctId: `bench-cap-${runId}-check-${side}-visitor`,
        t0: Date.UTC(2026, 10, 21, 8),
        seed: 42,
      },
      page,
    );
  const checkBodies = { service: check('service'), baseline: check('baseline') };
  // The same uuids on both sides: an event's key is per session, so each side's check session stores them all.
  checkBodies.baseline.forEach((request, i) =>
    request.json.forEach((event, j) => {
      (event as { uuid: string; distinct_id: string }).uuid = (
        checkBodies.service[i].json[j] as { uuid: string }
      ).uuid;
    }),
  );
  const answers: Record<Side, string> = { service: '', baseline: '' };
  for (const side of ['service', 'baseline'] as const) {
    answers[side] = await sendCheckSession(
      servers[side].url,
      gzipRequests(checkBodies[side].map((r) => r.json)),
    );
  }
  if (answers.service !== answers.baseline)
    throw new Error(`${name}: answers differ: service ${answers.service}, baseline ${answers.baseline}`);
  const packed = options.storage === 's3' && options.layout === 'packed';
  if (packed && !(await waitPacked(db, project.id, `bench-cap-${runId}-check-service`, 60_000)))
    throw new Error(`${name}: the service's packer left the check session's chunks waiting for 60 s`);
  const stored = {} as Record<Side, Awaited<ReturnType<typeof readStoredRecording>>>;
  for (const side of ['service', 'baseline'] as const) {
    stored[side] = await readStoredRecording(
      db,
      project.id,
      `bench-cap-${runId}-check-${side}`,
      options.readObject,
      options.kek ?? null,
    );
    if (!stored[side]) throw new Error(`${name}: the ${side} stored no recording for the check session`);
  }
  if (options.storage === 's3') {
    const inData = stored.baseline!.chunks.filter((c) => c.storedIn === 'data').length;
    if (inData)
      throw new Error(`${name}: the baseline wrote ${inData} chunks into PostgreSQL instead of the bucket`);
    if (stored.service!.chunks.some((c) => c.storedIn === 'data')) {
      const asRows = {
        ...stored.baseline!,
        chunks: stored.baseline!.chunks.map((c) => ({ ...c, storedIn: 'data' as const })),
      };
      const differs = storedDifference(stored.service!, asRows);
      if (differs)
        throw new Error(`${name}: the service and the baseline stored different things (${differs})`);
      throw new CaptureScenarioSkipped(
        'the service started with RECORDING_STORAGE=s3 but capture still wrote the chunks into PostgreSQL ' +
          `(object_key null; the baseline uploaded its ${stored.baseline!.chunks.length} chunks and read back ` +
          'the same lines): capture does not upload to the object store yet',
      );
    }
  }
  if (packed) {
    // The service's chunks are ranges of packed objects, the baseline's objects of their own: the same lines.
    const notPacked = stored.service!.chunks.filter((c) => c.storedIn !== 'packed').length;
    if (notPacked)
      throw new Error(`${name}: ${notPacked} chunks of the service's check session are not packed`);
    stored.service = {
      ...stored.service!,
      chunks: stored.service!.chunks.map((c) => ({ ...c, storedIn: 'object' as const })),
    };
  }
  const difference = storedDifference(stored.service!, stored.baseline!);
  if (difference)
    throw new Error(`${name}: the service and the baseline stored different things (${difference})`);
  const checkEvents = checkBodies.service.reduce((a, r) => a + r.events, 0);
  if (stored.service!.recording.event_count !== checkEvents)
    throw new Error(
      `${name}: the check session stored ${String(stored.service!.recording.event_count)} of ${checkEvents} events`,
    );
  log(
    `${name}: same answer (${answers.service}) and the same stored recording from both ` +
      `(${checkEvents} events, ${stored.service!.chunks.length} chunks in ${stored.service!.chunks[0]?.storedIn}, ` +
      `the re-sent request skipped)`,
  );

  // 2. Statements per request.
  let statements: CaptureLoadResult['statements'] = null;
  let serialP50: CaptureLoadResult['serialP50'] = null;
  if (options.statStatements) {
    const profiles = {} as Record<Side, StatementProfile>;
    for (const side of ['service', 'baseline'] as const) {
      const [queue] = connectionQueues(plan(`bench-cap-${runId}-sql-${side}`), 1, 20);
      profiles[side] = await profileCaptureBodies(
        db,
        servers[side].url,
        queue.map((q) => q.body),
        CAPTURE_PATH,
      );
    }
    const comparison = compareStatements(name, profiles);
    ({ statements, serialP50 } = comparison);
    log(comparison.summary);
  }

  // 3. Load.
  const rounds: CaptureLoadResult['rounds'] = [];
  for (let r = 0; r < bench.rounds; r++) {
    const order: Side[] = r % 2 === 0 ? ['service', 'baseline'] : ['baseline', 'service'];
    const figures = {} as Record<Side, CaptureLoadStats>;
    for (const side of order) {
      let rate = WARMUP_BUDGET_PER_CONNECTION * bench.connections;
      if (bench.warmupSec > 0) {
        const warm = connectionQueues(
          plan(`bench-cap-${runId}-w${r}-${side}`),
          bench.connections,
          WARMUP_BUDGET_PER_CONNECTION * bench.warmupSec,
        );
        const w = await runCaptureLoad(servers[side].url, warm, bench.warmupSec);
        if (w.exhausted)
          log(`${name} ${side}: the warm-up ran out of bodies (its rate was ${Math.round(w.rps)}/s)`);
        rate = w.rps;
      }
      const prefix = `bench-cap-${runId}-r${r}-${side}`;
      // Four times the warm-up's rate: on a busy machine the warm-up can run at under half the measured rate.
      const perConnection = Math.ceil((Math.max(rate, 20) * 4 * bench.durationSec) / bench.connections) + 10;
      const built = performance.now();
      const queues = connectionQueues(plan(prefix), bench.connections, perConnection);
      const buildMs = performance.now() - built;
      const bytes = queues.reduce((a, q) => a + q.reduce((b, x) => b + x.body.length, 0), 0);
      log(
        `${name} round ${r + 1} ${side}: ${queues.length} × ${queues[0].length} bodies built in ${Math.round(buildMs)} ms ` +
          `(${(bytes / 1e6).toFixed(1)} MB gzip)`,
      );
      const sampler = sampleRss(servers[side]);
      const cpuBefore = servers[side].cpuMs();
      const v8Before = servers[side].v8WorkerCpuMs();
      const storeBefore = options.storeCounts?.[side]() ?? null;
      const loadStarted = performance.now();
      const f: CaptureLoadFigures = await runCaptureLoad(servers[side].url, queues, bench.durationSec);
      const loadSeconds = (performance.now() - loadStarted) / 1000;
      // The packed layout stores a load's chunks after it (a pass every RECORDING_PACK_MAX_AGE_SECONDS): its
      // requests are counted until the last of them is packed, and set against the load's duration.
      if (packed && side === 'service' && !(await waitPacked(db, project.id, prefix, 120_000)))
        throw new Error(`${name}: the service's packer left chunks of the load waiting for 120 s`);
      const storeRequests = storeBefore ? countsBetween(storeBefore, options.storeCounts![side]()) : null;
      const cpuMs = servers[side].cpuMs() - cpuBefore;
      const v8Ms = servers[side].v8WorkerCpuMs() - v8Before;
      const rssMaxMb = sampler.stop();
      if (f.exhausted) {
        throw new Error(
          `${name} ${side}: a connection ran out of pre-built bodies (${perConnection} per connection); the figures would be short`,
        );
      }
      if (f.errorSamples.length) log(`${name} ${side}: errors, first: ${f.errorSamples.join(' | ')}`);
      const eventsStored = await storedEvents(db, project.id, prefix);
      figures[side] = {
        requests: f.requests,
        rps: f.rps,
        eventsPerSec: f.eventsPerSec,
        mbPerSec: f.mbPerSec,
        p50: f.p50,
        p99: f.p99,
        errors: f.errors,
        cpuMsPerRequest: f.requests ? cpuMs / f.requests : 0,
        v8CpuMsPerRequest: f.requests ? v8Ms / f.requests : 0,
        rssMaxMb,
        eventsSent: f.events,
        eventsStored,
        store: storeRequests ? { requests: storeRequests, seconds: loadSeconds } : null,
      };
      log(
        `${name} round ${r + 1} ${side}: ${Math.round(f.rps)} req/s, ${Math.round(f.eventsPerSec)} events/s, ` +
          `${f.mbPerSec.toFixed(2)} MB/s, p50 ${f.p50} ms, p99 ${f.p99} ms, ${f.errors} errors, ` +
          `${(cpuMs / (f.requests || 1)).toFixed(2)} CPU ms/request ` +
          `(V8 workers ${(v8Ms / (f.requests || 1)).toFixed(2)}), ${f.sessions.size} sessions, ` +
          `${eventsStored} of ${f.events} events stored` +
          (storeRequests
            ? `; object store: ${storeRequests.put} PUT, ${storeRequests.get} GET, ` +
              `${storeRequests.delete + storeRequests.other} other in ${loadSeconds.toFixed(1)} s`
            : ''),
      );
    }
    rounds.push({ first: order[0], service: figures.service, baseline: figures.baseline });
  }
  return {
    name,
    description: options.description,
    storage: options.storage,
    layout: options.storage === 's3' ? (options.layout ?? 'per-chunk') : null,
    playback: null,
    service: meanCapture(rounds.map((x) => x.service)),
    baseline: meanCapture(rounds.map((x) => x.baseline)),
    rounds,
    statements,
    serialP50,
    sameStored: true,
  };
}
