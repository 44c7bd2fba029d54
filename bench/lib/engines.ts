/**
 * The `citus` scenario: the service on one PostgreSQL beside the service on a Citus cluster, in the same run.
 *
 * The cluster is the one at BENCH_CITUS_URL (a coordinator whose `postgres` database has the citus extension and
 * its workers registered, as `npm run citus:up` leaves it). Without it the scenario is skipped with one line.
 *
 * Both engines are databases of the cluster's servers, so that they run with the same server settings and binaries
 * and the difference measured is the distribution alone:
 * - `postgres`: a plain database on the coordinator's server (no citus extension in it), migrated;
 * - `citus`: a database on every node, migrated and distributed (`node dist/cli.js database distribute`).
 *
 * Both get the same small seed (an organization, its owner with an API key, one project with the 50,000 events of
 * the `events-list` scenario, and CAPTURE_PROJECTS projects for the capture load). For each engine in turn
 * (alternating which goes first in each round) the built service is started against it and driven with:
 * - `events-list`: GET /api/projects/:id/events?limit=100 (autocannon), the answer first compared between engines;
 * - `capture-events` into one project (a hot tenant: every event on the one worker holding its shard);
 * - `capture-events` spread over CAPTURE_PROJECTS projects (each connection its own project).
 * The CPU time of the service and of each database server (the postmaster and its children, from /proc: the bench
 * runs on the cluster's machine) is taken around every measurement, so the report says where each event's CPU goes.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { runCaptureLoad } from './capture-runner.js';
import { compareAnswers } from './compare.js';
import { seedListEvents } from './events-list.js';
import { EVENTS_PATH, type EventsRequest, eventsQueues } from './events-load.js';
import { fetchOnce, requestHeaders, runLoad } from './load.js';
import type { BenchOptions } from './options.js';
import { type Server, startServer } from './processes.js';
import { round, table } from './report.js';

export const CITUS_SKIPPED =
  'BENCH_CITUS_URL is not set (the coordinator of a Citus cluster; `npm run citus:up` starts one and prints it)';

/** Projects the spread capture load writes to, one per connection in turn (8 shards per table on the test cluster). */
export const CAPTURE_PROJECTS = 8;
const PLAIN_DATABASE = 'org_admin_bench_plain';
const CITUS_DATABASE = 'org_admin_bench_citus';
const WARMUP_BUDGET_PER_CONNECTION = 60;

export type Engine = 'postgres' | 'citus';
export type EngineScenario = 'events-list' | 'capture-events' | 'capture-events-spread';

export interface EngineNodeCpu {
  node: string;
  /** CPU time of the node's server processes during the measurement, ms per request or per event. */
  cpuMsPerUnit: number;
  /** Share of one core the node used during the measurement. */
  cores: number;
}

export interface EngineMeasurement {
  engine: Engine;
  scenario: EngineScenario;
  round: number;
  rps: number;
  /** Events per second of the answered requests (capture scenarios), else 0. */
  eventsPerSec: number;
  p50: number;
  p99: number;
  errors: number;
  /** `event` for the capture scenarios, `request` for the list. */
  unit: 'event' | 'request';
  serviceCpuMsPerUnit: number;
  serviceCores: number;
  nodes: EngineNodeCpu[] | null;
  /** Capture scenarios: rows of the load found afterwards, and the events of the answered requests. */
  eventsStored: number | null;
  eventsSent: number | null;
  /** 1-minute load average after the measurement. */
  loadAverage: number;
}

export interface EnginesResult {
  coordinator: string;
  workers: number;
  shardCount: number;
  citusVersion: string;
  serverSettings: Record<string, string>;
  /** How the events of the hot tenant's project and of the spread projects lie over the workers. */
  placement: { project: number; worker: string }[];
  /** The events-list answer was the same on both engines (event uuids aside). */
  sameListAnswer: boolean;
  measurements: EngineMeasurement[];
  notes: string[];
}

function inDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.href;
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

interface NodeInfo {
  name: string;
  adminUrl: string;
  /** The postmaster's pid, when its data directory is readable here; else null (no CPU figures). */
  pid: number | null;
}

async function nodeInfo(name: string, adminUrl: string): Promise<NodeInfo> {
  return withClient(adminUrl, async (c) => {
    const dir = (await c.query<{ d: string }>('SELECT current_setting($1) AS d', ['data_directory'])).rows[0]
      .d;
    let pid: number | null;
    try {
      pid = Number(readFileSync(join(dir, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (!existsSync(`/proc/${pid}/stat`)) pid = null;
    } catch {
      pid = null;
    }
    return { name, adminUrl, pid };
  });
}

function statFields(pid: number | string): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * CPU time (ms) of a PostgreSQL server: its postmaster (including the children it has reaped: cutime, cstime)
 * and its live children. Clock ticks of 10 ms.
 */
export function serverCpuMs(postmaster: number): number {
  const own = statFields(postmaster);
  if (!own) return 0;
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const f = statFields(entry);
    // ppid is the 2nd field after the command name.
    if (f && Number(f[1]) === postmaster) ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks * 10;
}

function cli(root: string, args: string[], url: string): string {
  const r = spawnSync(process.execPath, [join(root, 'dist', 'cli.js'), ...args], {
    cwd: root,
    env: { ...process.env, DATABASE_URL: url, LOG_LEVEL: 'warn' },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed: ${r.stderr || r.stdout}`);
  return r.stdout;
}

interface EngineFixture {
  apiKey: string;
  listProjectId: number;
  capture: { id: number; token: string }[];
}

/** The same small seed on both engines (see the file's comment). */
async function seedEngine(c: pg.Client, secret: string, log: (m: string) => void): Promise<EngineFixture> {
  const user = (
    await c.query<{ id: number }>(
      `INSERT INTO users (email, distinct_id, first_name, last_name, is_email_verified)
       VALUES ('bench-engines@bench.example', 'bench-engines', 'Bench', 'Engines', true) RETURNING id`,
    )
  ).rows[0].id;
  const org = (
    await c.query<{ id: string }>(
      `INSERT INTO organizations (name, slug, created_at, updated_at)
       VALUES ('Bench engines', 'bench-engines', now(), now()) RETURNING id`,
    )
  ).rows[0].id;
  await c.query(
    `INSERT INTO organization_memberships (organization_id, user_id, level, joined_at, updated_at)
     VALUES ($1, $2, 15, now(), now())`,
    [org, user],
  );
  await c.query(
    `INSERT INTO personal_api_keys (user_id, label, secure_value, mask_value, scopes, last_used_at)
     VALUES ($1, 'bench engines', $2, $3, ARRAY['*'], now())`,
    [user, createHash('sha256').update(secret).digest('hex'), `phx_...${secret.slice(-4)}`],
  );
  const projects = (
    await c.query<{ id: number; api_token: string }>(
      `INSERT INTO projects (organization_id, name, api_token, secret_api_token, created_at)
       SELECT $1, format('Engines project %s', g), format('phc_engines_%s', g), format('phs_engines_%s', g), now()
         FROM generate_series(0, $2::int) g
       RETURNING id, api_token`,
      [org, CAPTURE_PROJECTS],
    )
  ).rows.sort((a, b) => a.id - b.id);
  await seedListEvents(c, projects[0].id, log);
  return {
    apiKey: secret,
    listProjectId: projects[0].id,
    capture: projects.slice(1).map((p) => ({ id: p.id, token: p.api_token })),
  };
}

function newSecret(): string {
  return `phx_${randomBytes(32).toString('base64url').replace(/[-_]/g, 'x').slice(0, 43)}`;
}

/** Creates (again) both databases, migrates them, distributes the Citus one, seeds both alike. */
async function prepare(
  root: string,
  coordinatorAdmin: string,
  workers: NodeInfo[],
  log: (m: string) => void,
): Promise<Record<Engine, { url: string; fixture: EngineFixture }>> {
  const secret = newSecret();
  const nodes = [coordinatorAdmin, ...workers.map((w) => w.adminUrl)];
  for (const node of nodes) {
    await withClient(node, async (c) => {
      await c.query(`DROP DATABASE IF EXISTS ${CITUS_DATABASE} WITH (FORCE)`);
      await c.query(`CREATE DATABASE ${CITUS_DATABASE}`);
    });
    await withClient(inDatabase(node, CITUS_DATABASE), (c) => c.query('CREATE EXTENSION citus'));
  }
  await withClient(coordinatorAdmin, async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${PLAIN_DATABASE} WITH (FORCE)`);
    await c.query(`CREATE DATABASE ${PLAIN_DATABASE}`);
  });
  const citusUrl = inDatabase(coordinatorAdmin, CITUS_DATABASE);
  const plainUrl = inDatabase(coordinatorAdmin, PLAIN_DATABASE);
  const coordinator = new URL(coordinatorAdmin);
  await withClient(citusUrl, async (c) => {
    await c.query('SELECT citus_set_coordinator_host($1, $2)', [
      coordinator.hostname,
      Number(coordinator.port || 5432),
    ]);
    for (const w of workers) {
      const u = new URL(w.adminUrl);
      await c.query('SELECT citus_add_node($1, $2)', [u.hostname, Number(u.port || 5432)]);
    }
  });
  let started = Date.now();
  cli(root, ['migrate'], plainUrl);
  log(`citus: the plain database migrated in ${round((Date.now() - started) / 1000, 1)} s`);
  started = Date.now();
  cli(root, ['database', 'distribute'], citusUrl);
  log(
    `citus: the cluster's database migrated and distributed in ${round((Date.now() - started) / 1000, 1)} s`,
  );
  const out = {} as Record<Engine, { url: string; fixture: EngineFixture }>;
  for (const [engine, url] of [
    ['postgres', plainUrl],
    ['citus', citusUrl],
  ] as const) {
    out[engine] = {
      url,
      fixture: await withClient(url, async (c) => {
        // The day partition of the list's events is created with DDL that Citus runs shard by shard
        // (the partition's foreign key to a reference table); a placeholder setting on plain PostgreSQL.
        await c.query(`SET citus.multi_shard_modify_mode TO 'sequential'`);
        return seedEngine(c, secret, (m) => log(`${engine}: ${m}`));
      }),
    };
  }
  return out;
}

/** Rows of one capture load (distinct ids `<prefix>…`) in the given projects. */
async function storedEvents(url: string, projects: number[], prefix: string): Promise<number> {
  return withClient(url, async (c) => {
    let n = 0;
    // One statement per project: each routed to its shard on Citus.
    for (const p of projects) {
      const { rows } = await c.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM events WHERE team_id = $1 AND distinct_id LIKE $2`,
        [p, `${prefix}%`],
      );
      n += rows[0].n;
    }
    return n;
  });
}

/** Capture queues: every connection into `projects[c % projects.length]`. */
function captureQueues(
  projects: { token: string }[],
  prefix: string,
  connections: number,
  perConnection: number,
): EventsRequest[][] {
  const t0 = Date.now() - 600_000;
  const queues: EventsRequest[][] = [];
  for (let c = 0; c < connections; c++) {
    const [queue] = eventsQueues(
      { token: projects[c % projects.length].token, prefix: `${prefix}-k${c}`, t0 },
      1,
      perConnection,
    );
    queues.push(queue);
  }
  return queues;
}

interface CpuClock {
  read(): { service: number; nodes: number[]; at: number };
}

export async function benchEngines(options: {
  root: string;
  citusUrl: string;
  bench: BenchOptions;
  servicePort: number;
  serviceEnv: (url: string) => Record<string, string>;
  logDir: string;
  serviceNodeArgs?: string[];
  loadAverage: () => number;
  log: (m: string) => void;
}): Promise<EnginesResult> {
  const { root, bench, log } = options;
  const coordinatorAdmin = inDatabase(options.citusUrl, 'postgres');
  const meta = await withClient(coordinatorAdmin, async (c) => {
    const ext = await c.query<{ v: string }>(
      `SELECT extversion AS v FROM pg_extension WHERE extname = 'citus'`,
    );
    if (!ext.rowCount)
      throw new Error(`BENCH_CITUS_URL: the database of ${coordinatorAdmin} has no citus extension`);
    const workers = await c.query<{ nodename: string; nodeport: number }>(
      `SELECT nodename, nodeport FROM pg_dist_node WHERE groupid <> 0 AND noderole = 'primary' AND isactive ORDER BY nodeid`,
    );
    const settings = await c.query<{ name: string; setting: string }>(
      `SELECT name, setting FROM pg_settings
        WHERE name IN ('fsync', 'synchronous_commit', 'shared_buffers', 'max_connections', 'citus.shard_count',
                       'server_version', 'citus.max_cached_conns_per_worker')`,
    );
    return {
      version: ext.rows[0].v,
      workers: workers.rows,
      settings: Object.fromEntries(settings.rows.map((r) => [r.name, r.setting])),
    };
  });
  if (!meta.workers.length) throw new Error('BENCH_CITUS_URL: the coordinator has no active worker');
  const coordinator = await nodeInfo('coordinator', coordinatorAdmin);
  const workers: NodeInfo[] = [];
  for (const [i, w] of meta.workers.entries()) {
    const u = new URL(coordinatorAdmin);
    u.hostname = w.nodename;
    u.port = String(w.nodeport);
    workers.push(await nodeInfo(`worker${i + 1}`, u.href));
  }
  const notes: string[] = [];
  if ([coordinator, ...workers].some((n) => n.pid === null))
    notes.push('a node runs elsewhere or its data directory is not readable here: no CPU figures per node');

  const engines = await prepare(root, coordinatorAdmin, workers, log);
  const nodesOf: Record<Engine, NodeInfo[]> = { postgres: [coordinator], citus: [coordinator, ...workers] };

  // Where each capture project's shard lives.
  const placement = await withClient(engines.citus.url, async (c) => {
    const projects = [engines.citus.fixture.listProjectId, ...engines.citus.fixture.capture.map((p) => p.id)];
    const { rows } = await c.query<{ project: number; port: number }>(
      `SELECT p AS project, s.nodeport AS port
         FROM unnest($1::int[]) p
         CROSS JOIN LATERAL (SELECT nodeport FROM citus_shards
                              WHERE shardid = get_shard_id_for_distribution_column('events', p)) s`,
      [projects],
    );
    return rows.map((r) => ({
      project: r.project,
      worker: workers.find((w) => new URL(w.adminUrl).port === String(r.port))?.name ?? `port ${r.port}`,
    }));
  });
  log(`citus: shards of the projects: ${placement.map((p) => `${p.project}→${p.worker}`).join(', ')}`);

  const measurements: EngineMeasurement[] = [];
  const listAnswers: Partial<Record<Engine, { status: number; body: string }>> = {};
  const runId = Date.now().toString(36);

  for (let r = 0; r < bench.rounds; r++) {
    const order: Engine[] = r % 2 === 0 ? ['postgres', 'citus'] : ['citus', 'postgres'];
    for (const engine of order) {
      const { url, fixture } = engines[engine];
      const service: Server = await startServer({
        name: 'service',
        script: join(root, 'dist', 'main.js'),
        port: options.servicePort,
        env: { ...options.serviceEnv(url), PUBLIC_MAX_CONCURRENT_PER_IP: '0' },
        logFile: join(options.logDir, `service-citus-${engine}.log`),
        readyPath: '/readyz',
        cwd: root,
        nodeArgs: options.serviceNodeArgs,
      });
      const clock: CpuClock = {
        read: () => ({
          service: service.cpuMs(),
          nodes: nodesOf[engine].map((n) => (n.pid === null ? 0 : serverCpuMs(n.pid))),
          at: performance.now(),
        }),
      };
      const measure = async <T extends { units: number }>(
        scenario: EngineScenario,
        unit: 'event' | 'request',
        load: () => Promise<T>,
      ): Promise<{
        figures: T;
        cpu: Pick<EngineMeasurement, 'serviceCpuMsPerUnit' | 'serviceCores' | 'nodes'>;
      }> => {
        const before = clock.read();
        const figures = await load();
        const after = clock.read();
        const wallMs = after.at - before.at;
        const per = (ms: number) => (figures.units ? ms / figures.units : 0);
        return {
          figures,
          cpu: {
            serviceCpuMsPerUnit: round(per(after.service - before.service), 3),
            serviceCores: round((after.service - before.service) / wallMs),
            nodes: nodesOf[engine].some((n) => n.pid === null)
              ? null
              : nodesOf[engine].map((n, i) => ({
                  node: n.name,
                  cpuMsPerUnit: round(per(after.nodes[i] - before.nodes[i]), 3),
                  cores: round((after.nodes[i] - before.nodes[i]) / wallMs),
                })),
          },
        };
      };
      try {
        // events-list: the answer, compared with the other engine's, then the load.
        const headers = requestHeaders(fixture.apiKey);
        const spec = {
          method: 'GET' as const,
          path: `/api/projects/${fixture.listProjectId}/events?limit=100`,
        };
        if (!listAnswers[engine]) {
          listAnswers[engine] = await fetchOnce(service.url, spec, headers);
          if (listAnswers[engine]!.status !== 200)
            throw new Error(
              `citus: events-list on ${engine} answered ${listAnswers[engine]!.status} ${listAnswers[engine]!.body.slice(0, 300)}`,
            );
        }
        if (bench.warmupSec > 0)
          await runLoad(service.url, spec, headers, bench.connections, bench.warmupSec);
        const list = await measure('events-list', 'request', async () => {
          const s = await runLoad(service.url, spec, headers, bench.connections, bench.durationSec);
          return { ...s, units: s.requests };
        });
        measurements.push({
          engine,
          scenario: 'events-list',
          round: r + 1,
          rps: round(list.figures.rps, 1),
          eventsPerSec: 0,
          p50: list.figures.p50,
          p99: list.figures.p99,
          errors: list.figures.errors,
          unit: 'request',
          ...list.cpu,
          eventsStored: null,
          eventsSent: null,
          loadAverage: options.loadAverage(),
        });
        log(
          `citus: events-list ${engine} round ${r + 1}: ${Math.round(list.figures.rps)} req/s, p50 ${list.figures.p50} ms, ` +
            `p99 ${list.figures.p99} ms, ${list.figures.errors} errors; CPU ms/request service ${list.cpu.serviceCpuMsPerUnit}` +
            (list.cpu.nodes
              ? `, ${list.cpu.nodes.map((n) => `${n.node} ${n.cpuMsPerUnit}`).join(', ')}`
              : ''),
        );

        // capture-events: into one project, then spread over CAPTURE_PROJECTS.
        for (const scenario of ['capture-events', 'capture-events-spread'] as const) {
          const projects = scenario === 'capture-events' ? fixture.capture.slice(0, 1) : fixture.capture;
          let rate = WARMUP_BUDGET_PER_CONNECTION * bench.connections;
          if (bench.warmupSec > 0) {
            const warm = captureQueues(
              projects,
              `bench-en-${runId}-w${r}-${engine}-${scenario}`,
              bench.connections,
              WARMUP_BUDGET_PER_CONNECTION * bench.warmupSec,
            );
            rate = (await runCaptureLoad(service.url, warm, bench.warmupSec, EVENTS_PATH)).rps;
          }
          const prefix = `bench-en-${runId}-r${r}-${engine}-${scenario}`;
          const perConnection =
            Math.ceil((Math.max(rate, 50) * 3 * bench.durationSec) / bench.connections) + 10;
          const queues = captureQueues(projects, prefix, bench.connections, perConnection);
          const load = await measure(scenario, 'event', async () => {
            const f = await runCaptureLoad(service.url, queues, bench.durationSec, EVENTS_PATH);
            return { ...f, units: f.events };
          });
          const f = load.figures;
          if (f.exhausted)
            throw new Error(`citus: ${scenario} ${engine}: a connection ran out of pre-built bodies`);
          if (f.errorSamples.length)
            log(`citus: ${scenario} ${engine}: errors, first: ${f.errorSamples.join(' | ')}`);
          const stored = await storedEvents(
            url,
            projects.map((p) => p.id),
            prefix,
          );
          measurements.push({
            engine,
            scenario,
            round: r + 1,
            rps: round(f.rps, 1),
            eventsPerSec: round(f.eventsPerSec, 0),
            p50: f.p50,
            p99: f.p99,
            errors: f.errors,
            unit: 'event',
            ...load.cpu,
            eventsStored: stored,
            eventsSent: f.events,
            loadAverage: options.loadAverage(),
          });
          log(
            `citus: ${scenario} ${engine} round ${r + 1}: ${Math.round(f.eventsPerSec)} events/s, p50 ${f.p50} ms, ` +
              `p99 ${f.p99} ms, ${f.errors} errors, ${stored} of ${f.events} stored; CPU ms/event service ` +
              `${load.cpu.serviceCpuMsPerUnit}` +
              (load.cpu.nodes
                ? `, ${load.cpu.nodes.map((n) => `${n.node} ${n.cpuMsPerUnit} (${n.cores} cores)`).join(', ')}`
                : ''),
          );
        }
      } finally {
        await service.stop();
      }
    }
  }

  // The list's events carry random uuids per database: compared without them.
  const comparison = compareAnswers(listAnswers.postgres!, listAnswers.citus!, [
    'results.*.id',
    'results.*.uuid',
    'next',
  ]);
  if (!comparison.equal) notes.push(`the events-list answers differ: ${comparison.difference}`);
  return {
    coordinator: `${new URL(coordinatorAdmin).hostname}:${new URL(coordinatorAdmin).port}`,
    workers: workers.length,
    shardCount: Number(meta.settings['citus.shard_count'] ?? 0),
    citusVersion: meta.version,
    serverSettings: meta.settings,
    placement,
    sameListAnswer: comparison.equal,
    measurements,
    notes,
  };
}

/** Rounds of one engine and scenario averaged. */
export function engineSummary(
  r: EnginesResult,
): { engine: Engine; scenario: EngineScenario; m: EngineMeasurement }[] {
  const out: { engine: Engine; scenario: EngineScenario; m: EngineMeasurement }[] = [];
  for (const scenario of ['events-list', 'capture-events', 'capture-events-spread'] as const) {
    for (const engine of ['postgres', 'citus'] as const) {
      const all = r.measurements.filter((m) => m.engine === engine && m.scenario === scenario);
      if (!all.length) continue;
      const mean = (f: (m: EngineMeasurement) => number) => all.reduce((a, m) => a + f(m), 0) / all.length;
      const nodes = all[0].nodes
        ? all[0].nodes.map((n, i) => ({
            node: n.node,
            cpuMsPerUnit: round(
              mean((m) => m.nodes![i].cpuMsPerUnit),
              3,
            ),
            cores: round(mean((m) => m.nodes![i].cores)),
          }))
        : null;
      out.push({
        engine,
        scenario,
        m: {
          ...all[0],
          round: 0,
          rps: round(
            mean((m) => m.rps),
            1,
          ),
          eventsPerSec: round(
            mean((m) => m.eventsPerSec),
            0,
          ),
          p50: round(
            mean((m) => m.p50),
            1,
          ),
          p99: round(
            mean((m) => m.p99),
            1,
          ),
          errors: all.reduce((a, m) => a + m.errors, 0),
          serviceCpuMsPerUnit: round(
            mean((m) => m.serviceCpuMsPerUnit),
            3,
          ),
          serviceCores: round(mean((m) => m.serviceCores)),
          nodes,
          eventsStored: all.reduce((a, m) => a + (m.eventsStored ?? 0), 0),
          eventsSent: all.reduce((a, m) => a + (m.eventsSent ?? 0), 0),
          loadAverage: round(mean((m) => m.loadAverage)),
        },
      });
    }
  }
  return out;
}

export function formatEnginesTable(r: EnginesResult): string {
  const rows = engineSummary(r).map(({ engine, scenario, m }) => [
    scenario,
    engine,
    m.rps,
    m.unit === 'event' ? m.eventsPerSec : '-',
    m.p50,
    m.p99,
    m.errors,
    m.unit === 'event' ? `${m.eventsStored}/${m.eventsSent}` : '-',
    `${m.serviceCpuMsPerUnit} (${m.serviceCores})`,
    m.nodes ? m.nodes.map((n) => `${n.node} ${n.cpuMsPerUnit} (${n.cores})`).join(', ') : '-',
  ]);
  return [
    `Citus ${r.citusVersion}, ${r.workers} workers, ${r.shardCount} shards per table; the single PostgreSQL is a plain ` +
      `database on the coordinator's server (same settings: ${Object.entries(r.serverSettings)
        .map(([k, v]) => `${k}=${v}`)
        .join(
          ', ',
        )}). CPU per ${'request (list) or event (capture)'}, ms, with the cores used in parentheses.`,
    table(
      [
        'scenario',
        'engine',
        'req/s',
        'events/s',
        'p50 ms',
        'p99 ms',
        'errors',
        'stored/sent',
        'service CPU ms',
        'database CPU ms per node',
      ],
      rows,
    ),
    ...r.notes.map((n) => `Note: ${n}`),
  ].join('\n\n');
}
