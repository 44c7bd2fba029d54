/**
 * The `capture-events` scenario: posthog-js event batches (bench/lib/events-load.ts) POSTed to /e/ of the
 * service and of the baseline (bench/baseline/events.ts), each started here.
 *
 * 1. a check visitor (its batches in order, with an `$identify`) is sent to both sides; the rows each stored —
 *    events in time order with their properties, elements chain, session, person and the person's properties —
 *    must be the same (ids and the random `$insert_id` aside), else the bench stops;
 * 2. the SQL statements per request are counted on each side (pg_stat_statements, when loaded), and must be the
 *    same statements as often (else the run says which differ);
 * 3. rounds of load, alternating which side goes first: a warm-up, then the measured seconds with bodies sized
 *    from the warm-up's rate; afterwards the rows of that load must be exactly the events of the answered
 *    requests, each uuid once.
 */
import { join } from 'node:path';
import type pg from 'pg';
import { postCapture, runCaptureLoad } from './capture-runner.js';
import { emptyCaptureProject } from './capture-load.js';
import {
  EVENTS_PATH,
  type EventsPlan,
  type EventsRequest,
  eventsQueues,
  visitorBatches,
} from './events-load.js';
import { type EventsLoadResult, type EventsLoadStats, meanEvents } from './events-report.js';
import type { BenchOptions } from './options.js';
import { sampleRss, type Server, startServer } from './processes.js';
import type { Side } from './scenarios.js';
import { compareStatements, profileCaptureBodies, type StatementProfile } from './statements.js';

const NAME = 'capture-events';
const DESCRIPTION =
  'POST /e/?compression=gzip-js — posthog-js batches of 20 mixed events (page views, autocapture with ' +
  'elements, custom events, $identify with $set), 3 batches per visitor, persons created and updated';
/** Requests per second and connection the warm-up's bodies are built for. */
const WARMUP_BUDGET_PER_CONNECTION = 60;

/** Removes the events, persons and recordings the scenario left in its project. */
async function emptyProject(db: pg.Client, teamId: number): Promise<void> {
  await db.query('DELETE FROM events WHERE team_id = $1', [teamId]);
  await emptyCaptureProject(db, teamId);
}

/** The rows of one load (distinct ids `<prefix>-…`): how many, and how many uuids are there more than once. */
export async function storedRows(
  db: pg.Client,
  teamId: number,
  prefix: string,
): Promise<{ rows: number; duplicates: number }> {
  const { rows } = await db.query<{ n: number; u: number }>(
    `SELECT count(*)::int AS n, count(DISTINCT uuid)::int AS u FROM events
      WHERE team_id = $1 AND distinct_id LIKE $2`,
    [teamId, `${prefix}-%`],
  );
  return { rows: rows[0].n, duplicates: rows[0].n - rows[0].u };
}

/** What one side stored for the check visitor, with its prefix written as `P` and per-row random values left out. */
async function checkRows(db: pg.Client, teamId: number, prefix: string): Promise<string> {
  const { rows } = await db.query<Record<string, unknown>>(
    `SELECT e.event, e.distinct_id, e."timestamp", e.elements_chain, e.session_id, e.window_id, e."set",
            e.set_once, e.properties - '$insert_id' AS properties, p.properties AS person,
            (SELECT array_agg(d.distinct_id ORDER BY d.distinct_id) FROM person_distinct_ids d
              WHERE d.person_id = p.id) AS person_ids
       FROM events e LEFT JOIN persons p ON p.uuid = e.person_id
      WHERE e.team_id = $1 AND e.distinct_id LIKE $2
      ORDER BY e."timestamp", e.event`,
    [teamId, `${prefix}-%`],
  );
  return JSON.stringify(rows).split(prefix).join('P');
}

export async function runEventsScenario(options: {
  bench: BenchOptions;
  db: pg.Client;
  postgresUrl: string;
  statStatements: boolean;
  project: { id: number; token: string };
  serviceEnv: () => Record<string, string>;
  start: {
    root: string;
    logDir: string;
    servicePort: number;
    baselinePort: number;
    poolSize: number;
    serviceNodeArgs?: string[];
    baselineNodeArgs?: string[];
  };
  log: (m: string) => void;
}): Promise<EventsLoadResult> {
  const { bench, db, log, project, start } = options;
  await emptyProject(db, project.id);
  const started: Partial<Record<Side, Server>> = {};
  try {
    started.service = await startServer({
      name: 'service',
      script: join(start.root, 'dist', 'main.js'),
      port: start.servicePort,
      // Browsers each send from their own address: the per-address cap is off here.
      env: { ...options.serviceEnv(), PUBLIC_MAX_CONCURRENT_PER_IP: '0' },
      logFile: join(start.logDir, `service-${NAME}.log`),
      readyPath: '/readyz',
      cwd: start.root,
      nodeArgs: start.serviceNodeArgs,
    });
    started.baseline = await startServer({
      name: 'baseline',
      script: join(start.root, 'dist-bench', 'baseline', 'server.js'),
      port: start.baselinePort,
      env: {
        DATABASE_URL: options.postgresUrl,
        PORT: String(start.baselinePort),
        DATABASE_POOL_SIZE: String(start.poolSize),
      },
      logFile: join(start.logDir, `baseline-${NAME}.log`),
      readyPath: '/healthz',
      cwd: start.root,
      nodeArgs: start.baselineNodeArgs,
    });
    const servers = started as Record<Side, Server>;
    const runId = Date.now().toString(36);
    // Recent times: the events must fall within the retention, on today's (or yesterday's) partition.
    const plan = (prefix: string): EventsPlan => ({ token: project.token, prefix, t0: Date.now() - 600_000 });

    // 1. The check visitor: the same events (other ids and uuids) to both sides, the same rows stored.
    const seen: Record<Side, string> = { service: '', baseline: '' };
    const checkT0 = Date.now() - 900_000;
    for (const side of ['service', 'baseline'] as const) {
      const prefix = `bench-ev-${runId}-check-${side}`;
      const batches = visitorBatches({ token: project.token, prefix, t0: checkT0 }, 'v', 2);
      for (const b of batches) {
        const res = await postCapture(servers[side].url, b.body, undefined, EVENTS_PATH);
        if (res.status !== 200 || JSON.parse(res.body).status !== 1)
          throw new Error(
            `${NAME}: the ${side} answered the check with ${res.status} ${res.body.slice(0, 300)}`,
          );
      }
      seen[side] = await checkRows(db, project.id, prefix);
      const count = (await storedRows(db, project.id, prefix)).rows;
      const sent = batches.reduce((a, b) => a + b.events, 0);
      if (count !== sent)
        throw new Error(`${NAME}: the ${side} stored ${count} of the check's ${sent} events`);
    }
    if (seen.service !== seen.baseline) {
      let i = 0;
      while (seen.service[i] === seen.baseline[i]) i++;
      throw new Error(
        `${NAME}: the service and the baseline stored different rows, from character ${i}: ` +
          `service …${seen.service.slice(i, i + 160)}… baseline …${seen.baseline.slice(i, i + 160)}…`,
      );
    }
    log(`${NAME}: the same rows and persons stored by both sides for the check visitor`);

    // 2. Statements per request.
    let statements: EventsLoadResult['statements'] = null;
    let serialP50: EventsLoadResult['serialP50'] = null;
    if (options.statStatements) {
      const per = {} as Record<Side, StatementProfile>;
      for (const side of ['service', 'baseline'] as const) {
        const [queue] = eventsQueues(plan(`bench-ev-${runId}-sql-${side}`), 1, 30);
        per[side] = await profileCaptureBodies(
          db,
          servers[side].url,
          queue.map((q) => q.body),
          EVENTS_PATH,
        );
      }
      const comparison = compareStatements(NAME, per);
      ({ statements, serialP50 } = comparison);
      log(
        comparison.summary +
          `; one request at a time, p50 ${per.service.serialP50.toFixed(1)} ms (service), ` +
          `${per.baseline.serialP50.toFixed(1)} ms (baseline)`,
      );
    }

    // 3. Load.
    const rounds: EventsLoadResult['rounds'] = [];
    for (let r = 0; r < bench.rounds; r++) {
      const order: Side[] = r % 2 === 0 ? ['service', 'baseline'] : ['baseline', 'service'];
      const figures = {} as Record<Side, EventsLoadStats>;
      for (const side of order) {
        let rate = WARMUP_BUDGET_PER_CONNECTION * bench.connections;
        if (bench.warmupSec > 0) {
          const warm = eventsQueues(
            plan(`bench-ev-${runId}-w${r}-${side}`),
            bench.connections,
            WARMUP_BUDGET_PER_CONNECTION * bench.warmupSec,
          );
          const w = await runCaptureLoad(servers[side].url, warm, bench.warmupSec, EVENTS_PATH);
          rate = w.rps;
        }
        const prefix = `bench-ev-${runId}-r${r}-${side}`;
        // Three times the warm-up's rate: a side may run faster once warm (running out stops the bench).
        const perConnection =
          Math.ceil((Math.max(rate, 50) * 3 * bench.durationSec) / bench.connections) + 10;
        const queues: EventsRequest[][] = eventsQueues(plan(prefix), bench.connections, perConnection);
        const sampler = sampleRss(servers[side]);
        const cpuBefore = servers[side].cpuMs();
        const v8Before = servers[side].v8WorkerCpuMs();
        const f = await runCaptureLoad(servers[side].url, queues, bench.durationSec, EVENTS_PATH);
        const cpuMs = servers[side].cpuMs() - cpuBefore;
        const v8Ms = servers[side].v8WorkerCpuMs() - v8Before;
        const rssMaxMb = sampler.stop();
        if (f.exhausted)
          throw new Error(
            `${NAME} ${side}: a connection ran out of pre-built bodies; the figures would be short`,
          );
        if (f.errorSamples.length) log(`${NAME} ${side}: errors, first: ${f.errorSamples.join(' | ')}`);
        const stored = await storedRows(db, project.id, prefix);
        figures[side] = {
          requests: f.requests,
          rps: f.rps,
          eventsPerSec: f.eventsPerSec,
          p50: f.p50,
          p99: f.p99,
          errors: f.errors,
          cpuMsPerEvent: f.events ? cpuMs / f.events : 0,
          v8CpuMsPerEvent: f.events ? v8Ms / f.events : 0,
          rssMaxMb,
          eventsSent: f.events,
          eventsStored: stored.rows,
          duplicates: stored.duplicates,
        };
        log(
          `${NAME} round ${r + 1} ${side}: ${Math.round(f.rps)} req/s, ${Math.round(f.eventsPerSec)} events/s, ` +
            `p50 ${f.p50} ms, p99 ${f.p99} ms, ${f.errors} errors, ` +
            `${(f.events ? cpuMs / f.events : 0).toFixed(3)} CPU ms/event ` +
            `(V8 workers ${(f.events ? v8Ms / f.events : 0).toFixed(3)}), RSS max ${Math.round(rssMaxMb)} MB, ` +
            `${stored.rows} of ${f.events} events stored, ${stored.duplicates} duplicated`,
        );
      }
      rounds.push({ first: order[0], service: figures.service, baseline: figures.baseline });
    }
    return {
      name: NAME,
      description: DESCRIPTION,
      service: meanEvents(rounds.map((x) => x.service)),
      baseline: meanEvents(rounds.map((x) => x.baseline)),
      rounds,
      statements,
      serialP50,
      sameStored: true,
    };
  } finally {
    await Promise.all(Object.values(started).map((s) => s.stop()));
    await emptyProject(db, project.id);
  }
}
