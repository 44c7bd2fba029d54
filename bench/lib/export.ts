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
  model: ExportModelName;
  rows: number;
  service: { seconds: number; rowsPerSec: number; bytes: number };
  baseline: { seconds: number; rowsPerSec: number };
  ratio: number;
  worker: { rssIdleMb: number; rssMaxMb: number; cpuMs: number };
  destinationRowsChecked: number;
}

/** PERSON_PROPERTIES_READ_MAX_BYTES of the service (persons.repository.ts): larger properties are read as `{}`. */
const PERSON_PROPERTIES_CAP = 2 * 1024 * 1024;

/** The exported model: `persons` (1,000,000 persons) or `events` (1,000,000 events), both of one hour. */
export type ExportModelName = 'persons' | 'events';
/** Events in the events export scenario, all inserted within the same hour. */
export const EXPORT_EVENTS = 1_000_000;
/** The events export delivers at least 0.6× the rows per second of a plain COPY of the same rows. */
export const MIN_EVENTS_EXPORT_RATIO = 0.6;

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

/**
 * The events export's rows, as the service's export reads them (a backfill: by the insert time alone), with the
 * same columns and expressions (the person's properties capped as the service caps them), in the same order.
 */
const EVENT_ROWS_SQL = `
  SELECT e.uuid::text AS uuid, e.event, e.properties, e.distinct_id, e.team_id, e."timestamp", e.created_at,
         e.elements_chain AS elements, e."set", e.set_once, e.properties->>'$ip' AS ip, '' AS site_url,
         e.person_id::text AS person_id,
         CASE WHEN p.id IS NULL THEN NULL
              WHEN octet_length(p.properties::text) <= $CAP THEN p.properties ELSE '{}'::jsonb END AS person_properties,
         greatest(e.created_at, '${HOUR_START.toISOString()}'::timestamptz) AS _inserted_at
    FROM events e
    LEFT JOIN persons p ON p.team_id = e.team_id AND p.uuid = e.person_id
   WHERE e.team_id = $TEAM AND e.created_at >= '${HOUR_START.toISOString()}' AND e.created_at < '${HOUR_END.toISOString()}'
   ORDER BY e.created_at, e.uuid`;

/** The events export's destination table, as the service creates it (the model's columns, key (team_id, uuid)). */
const EVENTS_TABLE_SQL = (name: string) => `CREATE TABLE ${name} (uuid TEXT, event TEXT, properties JSONB,
  distinct_id TEXT, team_id INTEGER, "timestamp" TIMESTAMP WITH TIME ZONE, created_at TIMESTAMP WITH TIME ZONE,
  elements TEXT, "set" JSONB, set_once JSONB, ip TEXT, site_url TEXT, person_id TEXT, person_properties JSONB,
  _inserted_at TIMESTAMP WITH TIME ZONE, PRIMARY KEY (team_id, uuid))`;

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
 * Inserts the events scenario's events (once: kept while the bench database is): 1,000,000 events of 10,000
 * persons of the project (their person uuid set), inserted (`created_at`) within the scenario's hour, with
 * PostHog-like properties (a page view's URL, an autocapture's elements chain, `$set` on some).
 */
async function seedEvents(db: pg.Client, teamId: number, log: (m: string) => void): Promise<void> {
  const day = HOUR_START.toISOString().slice(0, 10).replaceAll('-', '');
  const partition = `events_p${day}`;
  const exists = (await db.query<{ oid: string | null }>(`SELECT to_regclass($1)::text AS oid`, [partition]))
    .rows[0].oid;
  if (exists) {
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM ${partition} WHERE team_id = $1 AND created_at >= $2 AND created_at < $3`,
      [teamId, HOUR_START, HOUR_END],
    );
    if (rows[0].n === EXPORT_EVENTS) return;
    await db.query(`DROP TABLE ${partition}`);
  }
  log(`export: seeding ${EXPORT_EVENTS} events inserted in ${HOUR_START.toISOString()}`);
  const started = Date.now();
  const next = new Date(HOUR_START.getTime() + 24 * 3600_000).toISOString();
  // Filled before it is attached (the parent's indexes are then built in bulk), with the service's unique index.
  await db.query(`CREATE TABLE ${partition} (LIKE events INCLUDING DEFAULTS)`);
  await db.query(
    `WITH people AS (
       SELECT row_number() OVER (ORDER BY id) - 1 AS n, uuid FROM persons WHERE team_id = $1 ORDER BY id LIMIT 10000
     ), counted AS (SELECT count(*)::int AS c FROM people)
     INSERT INTO ${partition} (uuid, event, properties, "timestamp", created_at, team_id, distinct_id, person_id,
                               elements_chain, session_id, window_id, "set")
     SELECT gen_random_uuid(),
            CASE WHEN g % 10 < 5 THEN '$pageview' WHEN g % 10 < 9 THEN '$autocapture' ELSE 'order placed' END,
            jsonb_build_object('$current_url', format('https://app.bench.test/page/%s', g % 1000),
                               '$ip', format('10.0.%s.%s', g % 250, g % 200), '$browser', 'Chrome',
                               '$session_id', format('export-session-%s', g / 10), 'amount', g % 200),
            $2::timestamptz + (g % 3600) * interval '1 second', $2::timestamptz + (g % 3600) * interval '1 second',
            $1, format('bench-export-%s', g % 10000), p.uuid,
            CASE WHEN g % 10 BETWEEN 5 AND 8 THEN 'button.btn:text="Buy"nth-child="1";div.card:nth-child="2"' ELSE '' END,
            format('export-session-%s', g / 10), format('export-window-%s', g / 10),
            CASE WHEN g % 100 = 0 THEN jsonb_build_object('plan', 'pro') END
       FROM generate_series(1, $3::int) g
       CROSS JOIN counted
       LEFT JOIN people p ON p.n = g % greatest(counted.c, 1)`,
    [teamId, HOUR_START, EXPORT_EVENTS],
  );
  await db.query(
    `ALTER TABLE events ATTACH PARTITION ${partition} FOR VALUES FROM ('${HOUR_START.toISOString()}') TO ('${next}')`,
  );
  await db.query(`CREATE UNIQUE INDEX ${partition}_team_uuid_key ON ${partition} (team_id, uuid)`);
  await db.query(`VACUUM ANALYZE ${partition}`);
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
  model: ExportModelName;
  root: string;
  url: string;
  adminUrl: string;
  db: pg.Client;
  apiKey: string;
  organizationId: string;
  port: number;
  nodeOptions: string;
  /** The worker Deployment's malloc settings (deploymentMallocEnv). */
  mallocEnv: Record<string, string>;
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
  if (options.model === 'events') await seedEvents(db, teamId, log);
  const events = options.model === 'events';

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
    const baselineTable = `baseline_${options.model}`;
    await destination.query(events ? EVENTS_TABLE_SQL(baselineTable) : TABLE_SQL(baselineTable));
    const source = new pg.Client({ connectionString: options.url });
    await source.connect();
    const rowsSql = events
      ? EVENT_ROWS_SQL.replace('$TEAM', String(teamId)).replace('$CAP', String(PERSON_PROPERTIES_CAP))
      : ROWS_SQL.replace('$TEAM', String(teamId));
    const baselineStarted = performance.now();
    try {
      await pipeline(
        source.query(copyTo(`COPY (${rowsSql}) TO STDOUT`)),
        destination.query(copyFrom(`COPY ${baselineTable} FROM STDIN`)),
      );
    } finally {
      await source.end();
    }
    const baselineSeconds = (performance.now() - baselineStarted) / 1000;
    const baselineRows = (
      await destination.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${baselineTable}`)
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
        ...options.mallocEnv,
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
        // The scenario's events are dated in its hour, years ago: kept (their partition is not dropped).
        EVENTS_RETENTION_DAYS: '3650',
        EVENTS_PURGE_INTERVAL_SECONDS: '0',
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
        name: `bench ${options.model} export`,
        model: options.model,
        interval: 'hour',
        destination: {
          type: 'Postgres',
          config: {
            host: url.hostname,
            port: Number(url.port || 5432),
            database: DESTINATION_DATABASE,
            user: decodeURIComponent(url.username) || 'postgres',
            password: decodeURIComponent(url.password) || 'unused',
            table_name: options.model,
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
      const checked = (
        await destination.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${options.model}`)
      ).rows[0].n;
      if (checked !== baselineRows || rows !== baselineRows) {
        throw new Error(
          `export: ${rows} records reported, ${checked} rows at the destination, ${baselineRows} expected`,
        );
      }
      if (events) {
        // The same rows as the COPY: every column of every event equal.
        const { rows: diff } = await destination.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM (
             (SELECT uuid, event, properties, distinct_id, team_id, "timestamp", created_at, elements, "set", set_once,
                     ip, site_url, person_id, person_properties, _inserted_at FROM events
              EXCEPT SELECT * FROM ${baselineTable})
             UNION ALL
             (SELECT * FROM ${baselineTable}
              EXCEPT SELECT uuid, event, properties, distinct_id, team_id, "timestamp", created_at, elements, "set",
                            set_once, ip, site_url, person_id, person_properties, _inserted_at FROM events)) d`,
        );
        if (diff[0].n !== 0) {
          throw new Error(
            `export: ${diff[0].n} rows differ between the export and the COPY of the same rows`,
          );
        }
      }
      const result: ExportResult = {
        model: options.model,
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
      [`export (${r.model} → Postgres)`, 'rows', 'seconds', 'rows/s'],
      [
        ['service (batch export run)', r.rows, r.service.seconds, r.service.rowsPerSec],
        ['baseline (plain COPY)', r.rows, r.baseline.seconds, r.baseline.rowsPerSec],
      ],
    ),
    '',
    `Ratio (service rows/s ÷ COPY rows/s): ${r.ratio} (target ≥ ${minExportRatio(r.model)}). ` +
      `Worker RSS: ${r.worker.rssIdleMb} MB idle, ${r.worker.rssMaxMb} MB max during the run; ` +
      `${r.worker.cpuMs} ms of worker CPU.`,
  ].join('\n');
}

/** The target ratio of a model's export to the plain COPY. */
export const minExportRatio = (model: ExportModelName): number =>
  model === 'events' ? MIN_EVENTS_EXPORT_RATIO : MIN_EXPORT_RATIO;
