import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { from as copyFrom, to as copyTo } from 'pg-copy-streams';
import { sampleRss, startServer } from './processes.js';
import { round, table } from './report.js';

/** Persons in the export scenario, all changed within one hour that nothing else of the seed uses. */
export const EXPORT_PERSONS = 1_000_000;
const HOUR_START = new Date('2020-01-01T00:00:00.000Z');
const HOUR_END = new Date('2020-01-01T01:00:00.000Z');
const DESTINATION_DATABASE = 'org_admin_bench_export';
/** The service delivers at least half the rows per second of a plain COPY of the same rows. */
export const MIN_EXPORT_RATIO = 0.5;

export interface ExportResult {
  rows: number;
  service: { seconds: number; rowsPerSec: number; bytes: number };
  baseline: { seconds: number; rowsPerSec: number };
  ratio: number;
  worker: { rssIdleMb: number; rssMaxMb: number; cpuMs: number };
  destinationRowsChecked: number;
}

/** The persons export's rows, as the service's export reads them (one statement, for the COPY baseline). */
const ROWS_SQL = `
  SELECT d.team_id, d.distinct_id, p.uuid::text AS person_id, p.properties,
         d.version AS person_distinct_id_version, p.version AS person_version, p.created_at,
         least(p.updated_at, d.updated_at) AS _inserted_at, false AS is_deleted
    FROM person_distinct_ids d JOIN persons p ON p.id = d.person_id
   WHERE d.team_id = $TEAM
     AND ((p.updated_at >= '${HOUR_START.toISOString()}' AND p.updated_at < '${HOUR_END.toISOString()}')
       OR (d.updated_at >= '${HOUR_START.toISOString()}' AND d.updated_at < '${HOUR_END.toISOString()}'))
   ORDER BY d.id`;

const TABLE_SQL = (name: string) => `CREATE TABLE ${name} (team_id INTEGER, distinct_id TEXT, person_id TEXT,
  properties JSONB, person_distinct_id_version BIGINT, person_version BIGINT, created_at TIMESTAMP WITH TIME ZONE,
  _inserted_at TIMESTAMP WITH TIME ZONE, is_deleted BOOLEAN, PRIMARY KEY (team_id, distinct_id))`;

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.href;
}

/** Inserts the scenario's persons (once: kept while the bench database is). */
async function seedPersons(db: pg.Client, teamId: number, log: (m: string) => void): Promise<void> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM persons WHERE team_id = $1 AND updated_at >= $2 AND updated_at < $3`,
    [teamId, HOUR_START, HOUR_END],
  );
  if (rows[0].n === EXPORT_PERSONS) return;
  log(`export: seeding ${EXPORT_PERSONS} persons changed in ${HOUR_START.toISOString()}`);
  const started = Date.now();
  await db.query(`DELETE FROM persons WHERE team_id = $1 AND updated_at >= $2 AND updated_at < $3`, [
    teamId,
    HOUR_START,
    HOUR_END,
  ]);
  await db.query(
    `WITH inserted AS (
       INSERT INTO persons (team_id, properties, created_at, updated_at)
       SELECT $1, jsonb_build_object('email', 'person' || g || '@example.com', 'name', 'Person ' || g,
                                     'plan', CASE WHEN g % 3 = 0 THEN 'pro' ELSE 'free' END, 'visits', g % 97),
              $2::timestamptz + (g % 3600) * interval '1 second', $2::timestamptz + (g % 3600) * interval '1 second'
         FROM generate_series(1, $3) AS g
       RETURNING id, updated_at
     )
     INSERT INTO person_distinct_ids (team_id, distinct_id, person_id, updated_at)
     SELECT $1, 'bench-export-' || id, id, updated_at FROM inserted`,
    [teamId, HOUR_START, EXPORT_PERSONS],
  );
  await db.query('VACUUM ANALYZE persons, person_distinct_ids');
  log(`export: seeded in ${round((Date.now() - started) / 1000, 1)} s`);
}

/**
 * The export scenario: 1,000,000 persons changed within one hour, exported by a batch export run of the built
 * service (a worker process, `node dist/main.js` with the worker Deployment's NODE_OPTIONS) to a Postgres
 * destination on the same server, against a plain COPY of the same rows from the source to a table of the same
 * shape (`COPY (SELECT …) TO STDOUT` piped into `COPY … FROM STDIN`), in the same run. Reports rows per second
 * of both and the worker's resident memory.
 */
export async function benchExport(options: {
  root: string;
  url: string;
  adminUrl: string;
  db: pg.Client;
  apiKey: string;
  organizationId: string;
  port: number;
  nodeOptions: string;
  logDir: string;
  log: (m: string) => void;
}): Promise<ExportResult> {
  const { db, log } = options;
  const [{ id: teamId }] = (
    await db.query<{ id: number }>('SELECT id FROM projects WHERE organization_id = $1 ORDER BY id LIMIT 1', [
      options.organizationId,
    ])
  ).rows;
  await seedPersons(db, teamId, log);

  const admin = new pg.Client({ connectionString: options.adminUrl });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${DESTINATION_DATABASE} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${DESTINATION_DATABASE}`);
  await admin.end();
  const destinationUrl = withDatabase(options.url, DESTINATION_DATABASE);
  const destination = new pg.Client({ connectionString: destinationUrl });
  await destination.connect();
  try {
    // Baseline: the same rows, one COPY out of the source and into the destination.
    await destination.query(TABLE_SQL('baseline_persons'));
    const source = new pg.Client({ connectionString: options.url });
    await source.connect();
    const baselineStarted = performance.now();
    try {
      await pipeline(
        source.query(copyTo(`COPY (${ROWS_SQL.replace('$TEAM', String(teamId))}) TO STDOUT`)),
        destination.query(copyFrom('COPY baseline_persons FROM STDIN')),
      );
    } finally {
      await source.end();
    }
    const baselineSeconds = (performance.now() - baselineStarted) / 1000;
    const baselineRows = (
      await destination.query<{ n: number }>('SELECT count(*)::int AS n FROM baseline_persons')
    ).rows[0].n;
    log(
      `export: baseline COPY of ${baselineRows} rows in ${round(baselineSeconds, 1)} s (${round(baselineRows / baselineSeconds, 0)} rows/s)`,
    );

    // The service: a worker process executes the run.
    const worker = await startServer({
      name: 'export worker',
      script: join(options.root, 'dist', 'main.js'),
      port: options.port,
      env: {
        NODE_OPTIONS: options.nodeOptions,
        NODE_ENV: 'production',
        HOST: '127.0.0.1',
        PORT: String(options.port),
        DATABASE_URL: options.url,
        // debug: the worker logs how long reading, writing and the final merge took.
        LOG_LEVEL: 'debug',
        MIGRATIONS_RUN: 'false',
        SCHEDULER_ENABLED: 'false',
        RATE_LIMIT_ENABLED: 'false',
        BATCH_EXPORT_WORKERS: 'true',
        BATCH_EXPORT_WORKER_CONCURRENCY: '1',
        BATCH_EXPORT_POLL_INTERVAL_MS: '200',
        // The destination is this machine's PostgreSQL.
        BATCH_EXPORT_ALLOW_PRIVATE_DESTINATIONS: 'true',
      },
      logFile: join(options.logDir, 'export-worker.log'),
      readyPath: '/readyz',
      cwd: options.root,
    });
    const headers = { Authorization: `Bearer ${options.apiKey}`, 'Content-Type': 'application/json' };
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(
        `${worker.url}/api/organizations/${options.organizationId}/batch_exports${path}`,
        {
          method,
          headers,
          body: body === undefined ? undefined : JSON.stringify(body),
        },
      );
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
      return text ? (JSON.parse(text) as Record<string, unknown>) : {};
    };
    let exportId: string | null = null;
    try {
      await sleep(1000);
      const rssIdleMb = worker.rssMb();
      const url = new URL(options.url);
      const created = await api('POST', '', {
        name: 'bench export',
        model: 'persons',
        interval: 'hour',
        destination: {
          type: 'Postgres',
          config: {
            host: url.hostname,
            port: Number(url.port || 5432),
            database: DESTINATION_DATABASE,
            user: decodeURIComponent(url.username) || 'postgres',
            password: decodeURIComponent(url.password) || 'unused',
            table_name: 'persons',
          },
        },
      });
      exportId = created.id as string;
      const sampler = sampleRss(worker, 100);
      const cpuBefore = worker.cpuMs();
      await api('POST', `/${exportId}/backfill`, {
        start_at: HOUR_START.toISOString(),
        end_at: HOUR_END.toISOString(),
      });
      let run: Record<string, unknown> | undefined;
      const deadline = Date.now() + 30 * 60_000;
      for (;;) {
        const runs = (await api('GET', `/${exportId}/runs`)).results as Record<string, unknown>[];
        run = runs[0];
        if (run && !['Starting', 'Running'].includes(run.status as string)) break;
        if (Date.now() > deadline) throw new Error('export: the run did not end within 30 minutes');
        await sleep(250);
      }
      const rssMaxMb = sampler.stop();
      const cpuMs = worker.cpuMs() - cpuBefore;
      if (run.status !== 'Completed')
        throw new Error(`export: the run ended ${run.status}: ${run.latest_error}`);
      const [{ started }] = (
        await db.query<{ started: Date }>(
          `SELECT timestamp AS started FROM batch_export_logs WHERE run_id = $1 AND message LIKE 'Run started:%'`,
          [run.id],
        )
      ).rows;
      const seconds = (new Date(run.finished_at as string).getTime() - started.getTime()) / 1000;
      const rows = run.records_completed as number;
      const checked = (await destination.query<{ n: number }>('SELECT count(*)::int AS n FROM persons'))
        .rows[0].n;
      if (checked !== baselineRows || rows !== baselineRows) {
        throw new Error(
          `export: ${rows} records reported, ${checked} rows at the destination, ${baselineRows} expected`,
        );
      }
      const result: ExportResult = {
        rows,
        service: {
          seconds: round(seconds, 2),
          rowsPerSec: round(rows / seconds, 0),
          bytes: run.bytes_exported as number,
        },
        baseline: {
          seconds: round(baselineSeconds, 2),
          rowsPerSec: round(baselineRows / baselineSeconds, 0),
        },
        ratio: round(baselineSeconds / seconds, 3),
        worker: { rssIdleMb: round(rssIdleMb, 0), rssMaxMb: round(rssMaxMb, 0), cpuMs: round(cpuMs, 0) },
        destinationRowsChecked: checked,
      };
      log(
        `export: service ${rows} rows in ${result.service.seconds} s (${result.service.rowsPerSec} rows/s), ` +
          `${round(result.ratio, 2)}× the COPY baseline; worker RSS ${result.worker.rssIdleMb} MB idle, ${result.worker.rssMaxMb} MB max`,
      );
      return result;
    } finally {
      if (exportId) await api('DELETE', `/${exportId}`).catch(() => undefined);
      await worker.stop();
    }
  } finally {
    await destination.end();
  }
}

/** The export scenario's table. */
export function formatExportTable(r: ExportResult): string {
  return [
    table(
      ['export (persons → Postgres)', 'rows', 'seconds', 'rows/s'],
      [
        ['service (batch export run)', r.rows, r.service.seconds, r.service.rowsPerSec],
        ['baseline (plain COPY)', r.rows, r.baseline.seconds, r.baseline.rowsPerSec],
      ],
    ),
    '',
    `Ratio (service rows/s ÷ COPY rows/s): ${r.ratio} (target ≥ ${MIN_EXPORT_RATIO}). ` +
      `Worker RSS: ${r.worker.rssIdleMb} MB idle, ${r.worker.rssMaxMb} MB max during the run; ` +
      `${r.worker.cpuMs} ms of worker CPU.`,
  ].join('\n');
}
