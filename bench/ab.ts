/**
 * Two builds of the service side by side (`node dist-bench/ab.js --a=DIR --b=DIR`): each built checkout's
 * service on its own database of one PostgreSQL server, measured under the same capture load in interleaved
 * trials — A then B, then B then A, … — so that the drift of a busy machine falls on both alike and each trial
 * gives a paired ratio B/A. Run-to-run noise of the bench (its rounds differ by up to ±20 %) is wider than the
 * differences a refactor is held to; measured next to each other, the two builds' medians are comparable.
 *
 * 1. per side: the database `bench_ab_<side>` dropped and created, migrated by that build (`dist/cli.js migrate`),
 *    one organization with one project (its capture token); the service started from `<dir>/dist/main.js` with
 *    the bench's settings (bench/lib/service-env.ts) and the Node running this script;
 * 2. a warm-up per side (its rate sizes the bodies of the trials);
 * 3. the trials: per side a fresh set of bodies (new uuids, the same generator), a CHECKPOINT, then the measured
 *    seconds; CPU time of the process and of its V8 worker threads from /proc, events/s, p50/p99, errors; then
 *    the rows of that load must be exactly the events of the answered requests, each once;
 * 4. the summary (bench/lib/ab-compare.ts) printed and written to --out with every trial.
 *
 * capture-s3 keeps the recordings in an object store: one s3rver for the run, started in this process as the
 * bench's scenario starts it, a bucket per side; the stored events are counted in PostgreSQL, as for capture-postgres.
 *
 * A/A (the same DIR twice) gives the noise floor of the comparison.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import {
  type AbFigures,
  type AbOptions,
  type AbSide,
  type AbTrial,
  AB_USAGE,
  formatSummary,
  parseAbOptions,
  summarizeTrials,
  trialOrder,
  trialProblem,
  withinBand,
} from './lib/ab-compare.js';
import { storedEvents } from './lib/capture-load.js';
import { S3_CREDENTIALS, startS3 } from './lib/capture-scenarios.js';
import { CAPTURE_PATH, runCaptureLoad } from './lib/capture-runner.js';
import { EVENTS_PATH, eventsQueues } from './lib/events-load.js';
import { storedRows } from './lib/events-scenario.js';
import { dropDatabase, recreateDatabase, withDatabase } from './lib/postgres.js';
import { sampleRss, type Server, startServer } from './lib/processes.js';
import { type CaptureRequest, connectionQueues, pageDom } from './lib/recording-load.js';
import { benchServiceEnv } from './lib/service-env.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const LOG_DIR = join(ROOT, 'bench', '.data', 'ab');
const PORT = Number(process.env.BENCH_AB_PORT ?? 3490);
const POOL_SIZE = 10;
const SIDES: readonly AbSide[] = ['a', 'b'];

const log = (m: string) => console.log(`[ab ${new Date().toISOString().slice(11, 19)}] ${m}`);

/** How a scenario's load is built, sent and counted (the same as the bench's scenario of that name). */
interface Load {
  path: string;
  /** Requests per second and connection the warm-up's bodies are built for. */
  warmupBudget: number;
  /** Bodies built for this many times the rate seen so far (running out stops the run). */
  headroom: number;
  env: Record<string, string>;
  /** Recordings kept in an object store (capture-s3): one s3rver for the run, a bucket per side. */
  objectStore: boolean;
  queues(token: string, prefix: string, connections: number, perConnection: number): CaptureRequest[][];
  stored(db: pg.Client, teamId: number, prefix: string): Promise<{ rows: number; duplicates: number }>;
}

function scenarioLoad(scenario: AbOptions['scenario']): Load {
  if (scenario === 'capture-events') {
    return {
      path: EVENTS_PATH,
      warmupBudget: 60,
      headroom: 3,
      env: {},
      objectStore: false,
      // Recent times: the events must fall on today's (or yesterday's) partition.
      queues: (token, prefix, connections, perConnection) =>
        eventsQueues({ token, prefix, t0: Date.now() - 600_000 }, connections, perConnection),
      stored: storedRows,
    };
  }
  const page = pageDom();
  return {
    path: CAPTURE_PATH,
    warmupBudget: 40,
    headroom: 4,
    // capture-s3: the service's default layout (packed, encrypted), as in the bench's scenario of that name.
    env: { RECORDING_STORAGE: scenario === 'capture-s3' ? 's3' : 'postgres' },
    objectStore: scenario === 'capture-s3',
    queues: (token, prefix, connections, perConnection) =>
      connectionQueues({ token, prefix, page, t0: Date.UTC(2026, 10, 21, 9) }, connections, perConnection),
    stored: async (db, teamId, prefix) => ({ rows: await storedEvents(db, teamId, prefix), duplicates: 0 }),
  };
}

function git(dir: string, ...args: string[]): string {
  const r = spawnSync('git', ['-C', dir, ...args], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : '';
}

/** The build's own migrations, run the way that build runs them (its CLI). */
function migrate(dir: string, url: string): void {
  const result = spawnSync(process.execPath, [join(dir, 'dist', 'cli.js'), 'migrate'], {
    cwd: dir,
    env: { ...process.env, DATABASE_URL: url },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`migrate in ${dir} failed: ${result.stderr || result.stdout}`);
}

/** One organization with one project, as the bench's seed makes them; its id and capture token. */
async function createProject(db: pg.Client, side: AbSide): Promise<{ id: number; token: string }> {
  const org = await db.query<{ id: string }>(
    `INSERT INTO organizations (name, slug, created_at, updated_at)
     VALUES ('Bench A/B organization', 'bench-ab', now(), now()) RETURNING id`,
  );
  const project = await db.query<{ id: number; api_token: string }>(
    `INSERT INTO projects (organization_id, name, api_token, secret_api_token, created_at)
     VALUES ($1, 'Default project', $2, $3, now()) RETURNING id, api_token`,
    [org.rows[0].id, `phc_bench_ab_${side}`, `phs_bench_ab_${side}`],
  );
  return { id: project.rows[0].id, token: project.rows[0].api_token };
}

interface SideState {
  dir: string;
  commit: string;
  /** The last commit that changed the service's sources or dependencies (src/, package-lock.json). */
  sourceCommit: string;
  subject: string;
  /** `git status --porcelain` of tracked files: a build of a checkout with local changes says so. */
  localChanges: string;
  url: string;
  db: pg.Client;
  project: { id: number; token: string };
  server: Server | null;
  /** The highest rate seen (warm-up and trials), requests per second: the next trial's bodies are sized from it. */
  rate: number;
  warmupRps: number | null;
}

async function measure(
  options: AbOptions,
  load: Load,
  s: SideState,
  prefix: string,
): Promise<AbFigures & { problem: string | null }> {
  const server = s.server!;
  const perConnection =
    Math.ceil((Math.max(s.rate, 20) * load.headroom * options.durationSec) / options.connections) + 10;
  const queues = load.queues(s.project.token, prefix, options.connections, perConnection);
  // Each measurement starts without a checkpoint pending from the other side's load (one server for both).
  await s.db.query('CHECKPOINT');
  const sampler = sampleRss(server);
  const cpuBefore = server.cpuMs();
  const v8Before = server.v8WorkerCpuMs();
  const f = await runCaptureLoad(server.url, queues, options.durationSec, load.path);
  const cpuMs = server.cpuMs() - cpuBefore;
  const v8Ms = server.v8WorkerCpuMs() - v8Before;
  const rssMaxMb = sampler.stop();
  if (f.exhausted)
    throw new Error(`${prefix}: a connection ran out of pre-built bodies; the figures would be short`);
  if (f.errorSamples.length) log(`${prefix}: errors, first: ${f.errorSamples.join(' | ')}`);
  s.rate = Math.max(s.rate, f.rps);
  const stored = await load.stored(s.db, s.project.id, prefix);
  const figures: AbFigures = {
    requests: f.requests,
    rps: f.rps,
    eventsPerSec: f.eventsPerSec,
    cpuMsPerEvent: f.events ? cpuMs / f.events : 0,
    v8CpuMsPerEvent: f.events ? v8Ms / f.events : 0,
    p50: f.p50,
    p99: f.p99,
    errors: f.errors,
    rssMaxMb,
    eventsSent: f.events,
    eventsStored: stored.rows,
    duplicates: stored.duplicates,
  };
  return { ...figures, problem: trialProblem(figures) };
}

function formatTrial(trial: number, side: AbSide, f: AbFigures & { problem: string | null }): string {
  return (
    `trial ${trial + 1} ${side.toUpperCase()}: ${Math.round(f.rps)} req/s, ${Math.round(f.eventsPerSec)} events/s, ` +
    `${f.cpuMsPerEvent.toFixed(4)} CPU ms/event (V8 workers ${f.v8CpuMsPerEvent.toFixed(4)}), ` +
    `p50 ${f.p50} ms, p99 ${f.p99} ms, ${f.errors} errors, RSS max ${Math.round(f.rssMaxMb)} MB, ` +
    `${f.eventsStored} of ${f.eventsSent} events stored, ${f.duplicates} duplicated` +
    (f.problem ? ` — PROBLEM: ${f.problem}` : '')
  );
}

async function main(): Promise<number> {
  const options = parseAbOptions(process.argv.slice(2), process.env);
  if (options.help) {
    console.log(AB_USAGE);
    return 0;
  }
  const load = scenarioLoad(options.scenario);
  const runId = Date.now().toString(36);
  mkdirSync(LOG_DIR, { recursive: true });
  const bucket = (side: AbSide) => `bench-ab-${side}`;
  // Started inside the `try` below, so that whatever fails after it still stops it.
  let s3: Awaited<ReturnType<typeof startS3>> | null = null;
  const kek = randomBytes(32).toString('base64');
  const env = (side: AbSide, url: string): Record<string, string> => ({
    ...benchServiceEnv({
      root: ROOT,
      port: PORT + SIDES.indexOf(side),
      databaseUrl: url,
      poolSize: POOL_SIZE,
    }),
    // Capture comes from many browsers, each its own address: the per-address cap is off, as in the bench.
    PUBLIC_MAX_CONCURRENT_PER_IP: '0',
    ...load.env,
    ...(s3
      ? {
          RECORDING_S3_BUCKET: bucket(side),
          RECORDING_S3_ENDPOINT: s3.endpoint,
          RECORDING_KEY_ENCRYPTION_KEY: kek,
          ...S3_CREDENTIALS,
        }
      : {}),
  });
  const sides = {} as Record<AbSide, SideState>;
  const trials: (AbTrial & { problems: Partial<Record<AbSide, string>> })[] = [];
  const started = new Date();
  const loadavgAtStart = loadavg();
  const write = (finished: boolean) => {
    if (!options.out) return;
    const summary = trials.length ? summarizeTrials(trials) : null;
    const {
      DATABASE_URL: _url,
      PORT: _port,
      RECORDING_KEY_ENCRYPTION_KEY: _kek,
      RECORDING_S3_ENDPOINT: _endpoint,
      ...serviceEnv
    } = env('a', '');
    const results = {
      tool: 'bench/ab',
      finished,
      date: started.toISOString(),
      scenario: options.scenario,
      options: { ...options, out: undefined, postgresUrl: undefined },
      machine: {
        cpus: cpus().length,
        model: cpus()[0]?.model ?? '',
        node: process.version,
        loadavgAtStart,
        loadavg: loadavg(),
      },
      serviceEnv,
      sides: Object.fromEntries(
        SIDES.filter((side) => sides[side]).map((side) => [
          side,
          {
            dir: sides[side].dir,
            commit: sides[side].commit,
            sourceCommit: sides[side].sourceCommit,
            subject: sides[side].subject,
            localChanges: sides[side].localChanges,
            warmupRps: sides[side].warmupRps,
          },
        ]),
      ),
      trials,
      summary,
      withinFivePercent: summary
        ? {
            cpuMsPerEvent: withinBand(summary.cpuMsPerEvent.ratio),
            eventsPerSec: withinBand(summary.eventsPerSec.ratio),
          }
        : null,
    };
    mkdirSync(dirname(resolve(options.out)), { recursive: true });
    writeFileSync(options.out, `${JSON.stringify(results, null, 2)}\n`);
  };
  try {
    if (load.objectStore) s3 = await startS3(SIDES.map(bucket));
    for (const side of SIDES) {
      const dir = resolve(side === 'a' ? options.a : options.b);
      const name = `bench_ab_${side}`;
      await recreateDatabase(options.postgresUrl, name);
      const url = withDatabase(options.postgresUrl, name);
      migrate(dir, url);
      const db = new pg.Client({ connectionString: url });
      await db.connect();
      sides[side] = {
        dir,
        commit: git(dir, 'rev-parse', '--short', 'HEAD'),
        sourceCommit: git(dir, 'log', '-1', '--format=%h', '--', 'src', 'package-lock.json'),
        subject: git(dir, 'log', '-1', '--format=%s').slice(0, 120),
        localChanges: git(dir, 'status', '--porcelain', '--untracked-files=no'),
        url,
        db,
        project: await createProject(db, side),
        server: null,
        rate: load.warmupBudget * options.connections,
        warmupRps: null,
      };
      const dirty = sides[side].localChanges;
      log(
        `${side.toUpperCase()}: ${dir} at ${sides[side].commit} (${sides[side].subject.slice(0, 70)}; sources of ` +
          `${sides[side].sourceCommit})` +
          (dirty ? `, with local changes: ${dirty.replace(/\n/g, '; ')}` : '') +
          `; database ${name} migrated`,
      );
    }
    for (const side of SIDES) {
      const s = sides[side];
      s.server = await startServer({
        name: `service ${side.toUpperCase()}`,
        script: join(s.dir, 'dist', 'main.js'),
        port: PORT + SIDES.indexOf(side),
        env: env(side, s.url),
        logFile: join(LOG_DIR, `service-${side}-${options.scenario}.log`),
        readyPath: '/readyz',
        cwd: s.dir,
        // Node's own flags for both services, as the bench takes them (e.g. --trace-gc, refused in NODE_OPTIONS).
        nodeArgs: process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean),
      });
    }
    log(
      `${options.scenario}: ${options.trials} trials of ${options.durationSec} s per side, ` +
        `${options.connections} connections, ${options.warmupSec} s warm-up per side`,
    );
    if (options.warmupSec > 0) {
      for (const side of SIDES) {
        const s = sides[side];
        const warm = load.queues(
          s.project.token,
          `bench-ab-${runId}-w-${side}`,
          options.connections,
          load.warmupBudget * options.warmupSec,
        );
        const w = await runCaptureLoad(s.server!.url, warm, options.warmupSec, load.path);
        if (w.errors) throw new Error(`the warm-up of ${side.toUpperCase()} had ${w.errors} errors`);
        s.rate = w.rps;
        s.warmupRps = w.rps;
        log(
          `warm-up ${side.toUpperCase()}: ${Math.round(w.rps)} req/s, ${Math.round(w.eventsPerSec)} events/s`,
        );
      }
    }
    for (let t = 0; t < options.trials; t++) {
      const figures = {} as Record<AbSide, AbFigures & { problem: string | null }>;
      for (const side of trialOrder(t)) {
        figures[side] = await measure(options, load, sides[side], `bench-ab-${runId}-t${t}-${side}`);
        log(formatTrial(t, side, figures[side]));
      }
      const problems: Partial<Record<AbSide, string>> = {};
      for (const side of SIDES) if (figures[side].problem) problems[side] = figures[side].problem!;
      const strip = ({ problem: _p, ...f }: AbFigures & { problem: string | null }): AbFigures => f;
      trials.push({ trial: t, first: trialOrder(t)[0], a: strip(figures.a), b: strip(figures.b), problems });
      write(false);
    }
    const summary = summarizeTrials(trials);
    log(
      `${options.scenario}, medians of ${trials.length} trials (A ${sides.a.commit}, B ${sides.b.commit}):`,
    );
    for (const line of formatSummary(summary)) log(`  ${line}`);
    for (const side of SIDES) {
      const sent = trials.reduce((n, t) => n + t[side].eventsSent, 0);
      const stored = trials.reduce((n, t) => n + t[side].eventsStored, 0);
      const duplicates = trials.reduce((n, t) => n + t[side].duplicates, 0);
      log(
        `  ${side.toUpperCase()} stored ${stored} of the ${sent} answered events, ${duplicates} duplicated`,
      );
    }
    const cpu = summary.cpuMsPerEvent.ratio;
    const rate = summary.eventsPerSec.ratio;
    log(
      `  within 5 %: CPU per event ${withinBand(cpu) ? 'yes' : 'no'} (B/A ${cpu?.toFixed(3)}), ` +
        `events/s ${withinBand(rate) ? 'yes' : 'no'} (B/A ${rate?.toFixed(3)})`,
    );
    write(true);
    if (options.out) log(`results written to ${options.out}`);
    return trials.some((t) => Object.keys(t.problems).length) ? 1 : 0;
  } finally {
    await Promise.all(SIDES.map((side) => sides[side]?.server?.stop()));
    await Promise.all(SIDES.map((side) => sides[side]?.db.end()));
    if (!options.keepDatabases) {
      for (const side of SIDES) await dropDatabase(options.postgresUrl, `bench_ab_${side}`).catch(() => {});
    }
    await s3?.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    process.exit(1);
  },
);
