// How long moving to Citus takes, measured on a test cluster (`npm run citus:up`): `npm run citus:timing`.
//
// 1. seeds a plain database on the coordinator's server (`citus_timing_src`, migrated with `dist/cli.js migrate`):
//    TIMING_PROJECTS projects, TIMING_EVENTS events over TIMING_DAYS day partitions, TIMING_RECORDINGS session
//    recordings, TIMING_PERSONS persons with one distinct id each; 40 % of the events and recordings in one project
//    (a very large tenant), the rest spread over the others;
// 2. distributes a copy of it in place (`CREATE DATABASE … TEMPLATE` on the coordinator, the database and the citus
//    extension on the workers, then `dist/cli.js database distribute`), timed;
// 3. on the distributed copy: `isolate_tenant_to_new_shard` of the large project, a restore point
//    (`citus_create_restore_point`), and, when the cluster has a worker more than the first two (start it with
//    `CITUS_WORKERS=3 npm run citus:up`), that worker added (`citus_add_node`) and the shards rebalanced
//    (`citus_rebalance_start`, waited for), timed;
// 4. dump and restore: a new database migrated and distributed empty, then the data of the plain one piped in
//    (`pg_dump --data-only --load-via-partition-root | psql`) with the tables' triggers off and the recordings'
//    counts rebuilt after, timed (TIMING_RESTORE_WITH_TRIGGERS=1: first with the triggers on, then again); the
//    same into a plain database for comparison.
//
// Prints a summary and writes it as JSON to TIMING_OUT (default: bench/results/<date>-citus-operations.json).
// Settings: CITUS_PORT (55432), CITUS_PG_BIN (/usr/lib/postgresql/15/bin), TIMING_EVENTS (1,000,000),
// TIMING_RECORDINGS (1,000,000), TIMING_PERSONS (100,000), TIMING_PROJECTS (20), TIMING_DAYS (5), TIMING_KEEP=1 to
// keep the databases. Needs `npm run build` first (dist/cli.js) and the project's Node 24 (npm scripts use it).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { loadavg, cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const env = process.env;
const port = Number(env.CITUS_PORT || 55432);
const pgBin = env.CITUS_PG_BIN || '/usr/lib/postgresql/15/bin';
const int = (name, fallback) => Number((env[name] ?? String(fallback)).replace(/_/g, ''));
const EVENTS = int('TIMING_EVENTS', 1_000_000);
const RECORDINGS = int('TIMING_RECORDINGS', 1_000_000);
const PERSONS = int('TIMING_PERSONS', 100_000);
const PROJECTS = int('TIMING_PROJECTS', 20);
const DAYS = int('TIMING_DAYS', 5);
const SRC = 'citus_timing_src';
const INPLACE = 'citus_timing_inplace';
const RESTORE = 'citus_timing_restore';
const PLAIN_COPY = 'citus_timing_plain_copy';

const url = (p, db = 'postgres') => `postgres://postgres@127.0.0.1:${p}/${db}`;
const log = (m) => console.log(`[citus-timing ${new Date().toISOString().slice(11, 19)}] ${m}`);
const secs = (ms) => Math.round(ms / 100) / 10;

async function q(p, db, sql, params) {
  const c = new pg.Client({ connectionString: url(p, db) });
  await c.connect();
  try {
    return (await c.query(sql, params)).rows;
  } finally {
    await c.end();
  }
}

async function timed(what, fn) {
  const started = Date.now();
  const value = await fn();
  const ms = Date.now() - started;
  log(`${what}: ${secs(ms)} s`);
  return { ms, value };
}

function cli(args, db) {
  const r = spawnSync(process.execPath, [join(root, 'dist', 'cli.js'), ...args], {
    cwd: root,
    env: { ...env, DATABASE_URL: url(port, db), LOG_LEVEL: 'warn' },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`${args.join(' ')} on ${db} failed: ${r.stderr || r.stdout}`);
  return r.stdout;
}

function shell(script) {
  const r = spawnSync('bash', ['-c', `set -euo pipefail; ${script}`], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${script}\n${r.stderr}`);
  return r.stdout;
}

/** The partitions of the seeded days, as the service creates them (EventsRepository.createPartition). */
function partitionDays() {
  const today = Math.floor(Date.now() / 86_400_000);
  return Array.from({ length: DAYS }, (_, i) => today - DAYS + i);
}

async function createPartitions(db) {
  const c = new pg.Client({ connectionString: url(port, db) });
  await c.connect();
  try {
    await c.query(`SET citus.multi_shard_modify_mode TO 'sequential'`);
    for (const day of partitionDays()) {
      const d = new Date(day * 86_400_000).toISOString();
      const name = `events_p${d.slice(0, 10).replace(/-/g, '')}`;
      if ((await c.query('SELECT to_regclass($1) AS r', [name])).rows[0].r) continue;
      const to = new Date((day + 1) * 86_400_000).toISOString();
      await c.query(`CREATE TABLE "${name}" PARTITION OF events FOR VALUES FROM ('${d}') TO ('${to}')`);
      await c.query(`CREATE UNIQUE INDEX "${name}_team_uuid_key" ON "${name}" (team_id, uuid)`);
    }
  } finally {
    await c.end();
  }
}

async function workers() {
  const rows = await q(
    port,
    'postgres',
    `SELECT nodeport FROM pg_dist_node WHERE groupid <> 0 AND noderole = 'primary' ORDER BY nodeport`,
  );
  return rows.map((r) => r.nodeport);
}

async function dropEverywhere(db, nodes) {
  for (const p of [port, ...nodes]) await q(p, 'postgres', `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
}

/** `db` on the given workers with the citus extension, and those workers registered in the coordinator's copy. */
async function citusDatabase(db, nodes, { template } = {}) {
  await q(port, 'postgres', `CREATE DATABASE ${db}${template ? ` TEMPLATE ${template}` : ''}`);
  for (const p of nodes) await q(p, 'postgres', `CREATE DATABASE ${db}`);
  for (const p of [port, ...nodes]) await q(p, db, 'CREATE EXTENSION IF NOT EXISTS citus');
  await q(port, db, 'SELECT citus_set_coordinator_host($1, $2)', ['127.0.0.1', port]);
  for (const p of nodes) await q(port, db, 'SELECT citus_add_node($1, $2)', ['127.0.0.1', p]);
}

async function seed() {
  await q(port, 'postgres', `DROP DATABASE IF EXISTS ${SRC} WITH (FORCE)`);
  await q(port, 'postgres', `CREATE DATABASE ${SRC}`);
  cli(['migrate'], SRC);
  await createPartitions(SRC);
  const c = new pg.Client({ connectionString: url(port, SRC) });
  await c.connect();
  try {
    const step = async (what, sql, params) => {
      const started = Date.now();
      const r = await c.query(sql, params);
      log(`seed: ${what}: ${r.rowCount} rows in ${secs(Date.now() - started)} s`);
    };
    const [{ id: org }] = (
      await c.query(
        `INSERT INTO organizations (name, slug, created_at, updated_at)
         VALUES ('Timing', 'timing', now(), now()) RETURNING id`,
      )
    ).rows;
    await step(
      'projects',
      `INSERT INTO projects (organization_id, name, api_token, secret_api_token, created_at)
       SELECT $1, format('Timing %s', g), format('phc_timing_%s', g), format('phs_timing_%s', g), now()
         FROM generate_series(1, $2::int) g`,
      [org, PROJECTS],
    );
    const ids = (await c.query('SELECT id FROM projects ORDER BY id')).rows.map((r) => r.id);
    // Project of row g: the first (large) project for 4 of every 10 rows, the others in turn for the rest.
    const projectOf = `(CASE WHEN g % 10 < 4 THEN ($1::int[])[1] ELSE ($1::int[])[2 + g % (array_length($1::int[], 1) - 1)] END)`;
    const days = partitionDays();
    const from = new Date(days[0] * 86_400_000).toISOString();
    const spanSec = DAYS * 86_400 - 1;
    await step(
      'persons',
      `INSERT INTO persons (team_id, uuid, properties, created_at)
       SELECT ${projectOf}, gen_random_uuid(), jsonb_build_object('email', format('person-%s@timing.test', g)),
              timestamptz '${from}'
         FROM generate_series(1, $2::int) g`,
      [ids, PERSONS],
    );
    await step(
      'person distinct ids',
      `INSERT INTO person_distinct_ids (team_id, distinct_id, person_id)
       SELECT team_id, format('person-%s', id), id FROM persons`,
    );
    await step(
      'events',
      `INSERT INTO events (uuid, event, properties, "timestamp", created_at, team_id, distinct_id, elements_chain,
                           session_id, window_id)
       SELECT gen_random_uuid(), CASE WHEN g % 3 = 0 THEN '$autocapture' ELSE '$pageview' END,
              jsonb_build_object('$current_url', format('https://app.timing.test/page/%s', g % 1000),
                                 '$browser', 'Chrome', '$lib', 'web', 'amount', g % 200),
              ts, ts, ${projectOf}, format('person-%s', 1 + g % $3::int),
              CASE WHEN g % 3 = 0 THEN 'button.btn:text="Buy"nth-child="1"' ELSE '' END,
              format('s-%s', g / 50), format('w-%s', g / 50)
         FROM generate_series(1, $2::int) g
        CROSS JOIN LATERAL (SELECT timestamptz '${from}' + (g::bigint * $4::int / $2::int) * interval '1 second' AS ts) t`,
      [ids, EVENTS, PERSONS, spanSec],
    );
    await step(
      'session recordings',
      `INSERT INTO session_recordings (team_id, session_id, distinct_id, start_time, end_time, click_count,
                                       keypress_count, mouse_activity_count, console_log_count, console_warn_count,
                                       console_error_count, active_ms, event_count, start_url, snapshot_source,
                                       created_at, last_event_received_at)
       SELECT ${projectOf}, format('s-%s', g), format('person-%s', 1 + g % $3::int), ts,
              ts + interval '5 minutes', g % 50, g % 30, g % 200, g % 7, g % 3, g % 2, 200000, 300,
              format('https://app.timing.test/page/%s', g % 1000), 'web', ts, ts + interval '5 minutes'
         FROM generate_series(1, $2::int) g
        CROSS JOIN LATERAL (SELECT timestamptz '${from}' + (g::bigint * $4::int / $2::int) * interval '1 second' AS ts) t`,
      [ids, RECORDINGS, PERSONS, spanSec],
    );
    await c.query('VACUUM ANALYZE');
    const [size] = (await c.query(`SELECT pg_size_pretty(pg_database_size(current_database())) AS s`)).rows;
    return { largeProject: ids[0], size: size.s };
  } finally {
    await c.end();
  }
}

async function counts(db) {
  const [r] = await q(
    port,
    db,
    `SELECT (SELECT count(*) FROM events)::int AS events, (SELECT count(*) FROM session_recordings)::int AS recordings,
            (SELECT count(*) FROM persons)::int AS persons, (SELECT count(*) FROM person_distinct_ids)::int AS distinct_ids,
            (SELECT coalesce(sum(recordings), 0) FROM session_recording_counts)::int AS counted_recordings`,
  );
  return r;
}

// Tables whose triggers the dump's rows would fire again (counts, activity entries, touch and export stamps).
const RESTORED_WITH_TRIGGERS = [
  'organizations',
  'projects',
  'persons',
  'person_distinct_ids',
  'session_recordings',
];

// In the order of their foreign keys (pg_dump does not order the partitions' rows after the tables they reference).
const DUMPED = [
  ['organizations', 'projects'],
  ['persons', 'person_distinct_ids', 'session_recordings'],
  ['events_p*'],
];

function dumpInto(db) {
  for (const group of DUMPED) {
    const tables = group.map((t) => `-t '${t}'`).join(' ');
    shell(
      `${pgBin}/pg_dump --data-only --load-via-partition-root ${tables} '${url(port, SRC)}' ` +
        `| ${pgBin}/psql -q -v ON_ERROR_STOP=1 -o /dev/null '${url(port, db)}'`,
    );
  }
}

/**
 * The dump's rows into `db` with the tables' triggers off (their effects are in the rows: counts, activity
 * entries, stamps; and the activity log's trigger functions do not run under pg_dump's empty search_path), then
 * the recordings' counts rebuilt by one statement (per co-located shard on Citus).
 */
async function restoreTriggersOff(db) {
  for (const t of RESTORED_WITH_TRIGGERS) await q(port, db, `ALTER TABLE ${t} DISABLE TRIGGER USER`);
  dumpInto(db);
  for (const t of RESTORED_WITH_TRIGGERS) await q(port, db, `ALTER TABLE ${t} ENABLE TRIGGER USER`);
  await q(
    port,
    db,
    `INSERT INTO session_recording_counts (team_id, recordings)
     SELECT team_id, count(*) FROM session_recordings WHERE deleted_at IS NULL GROUP BY team_id`,
  );
}

async function main() {
  if (!existsSync(join(root, 'dist', 'cli.js')))
    throw new Error('dist/cli.js is missing: run `npm run build`');
  const all = await workers();
  if (all.length < 2) throw new Error(`the cluster on ${port} has ${all.length} workers; 2 are needed`);
  const base = all.slice(0, 2);
  const extra = all[2] ?? null;
  const result = {
    date: new Date().toISOString().slice(0, 10),
    startedAt: new Date().toISOString(),
    machine: {
      cores: cpus().length,
      cpu: cpus()[0]?.model,
      loadAverageAtStart: loadavg().map((l) => +l.toFixed(2)),
    },
    cluster: {
      coordinator: port,
      workers: base,
      citus: (
        await q(port, 'postgres', `SELECT extversion AS v FROM pg_extension WHERE extname = 'citus'`)
      )[0].v,
      settings: Object.fromEntries(
        (
          await q(
            port,
            'postgres',
            `SELECT name, setting FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'wal_level',
               'citus.shard_count', 'shared_buffers', 'max_worker_processes', 'server_version')`,
          )
        ).map((r) => [r.name, r.setting]),
      ),
    },
    seed: { events: EVENTS, recordings: RECORDINGS, persons: PERSONS, projects: PROJECTS, days: DAYS },
  };
  for (const db of [INPLACE, RESTORE]) await dropEverywhere(db, all);
  await q(port, 'postgres', `DROP DATABASE IF EXISTS ${PLAIN_COPY} WITH (FORCE)`);

  const seeded = await timed('seed of the plain database', seed);
  result.seed.seconds = secs(seeded.ms);
  result.seed.size = seeded.value.size;
  const large = seeded.value.largeProject;
  const source = await counts(SRC);
  result.seed.rows = source;
  const rows = source.events + source.recordings + source.persons + source.distinct_ids;
  log(`seeded: ${JSON.stringify(source)} (${seeded.value.size})`);

  // 2. In place.
  await citusDatabase(INPLACE, base, { template: SRC });
  const inPlace = await timed('database distribute of the seeded copy (in place)', () =>
    cli(['database', 'distribute'], INPLACE),
  );
  result.inPlace = {
    seconds: secs(inPlace.ms),
    secondsPerMillionRows: secs((inPlace.ms * 1e6) / rows),
    rows,
    counts: await counts(INPLACE),
  };

  // 3. Operations on the distributed copy.
  const shardOf = async (table) =>
    (
      await q(port, INPLACE, `SELECT get_shard_id_for_distribution_column($1::regclass, $2::int) AS s`, [
        table,
        large,
      ])
    )[0].s;
  const before = await shardOf('events');
  try {
    const iso = await timed(`isolate_tenant_to_new_shard of project ${large} (40 % of the rows)`, () =>
      q(
        port,
        INPLACE,
        `SELECT isolate_tenant_to_new_shard('events', $1::int, 'CASCADE', shard_transfer_mode => 'block_writes') AS s`,
        [large],
      ),
    );
    const [range] = await q(
      port,
      INPLACE,
      `SELECT shardminvalue, shardmaxvalue, (SELECT nodeport FROM citus_shards c WHERE c.shardid = s.shardid LIMIT 1) AS port
         FROM pg_dist_shard s WHERE shardid = $1`,
      [iso.value[0].s],
    );
    result.isolate = {
      ok: true,
      seconds: secs(iso.ms),
      shardBefore: before,
      shardAfter: iso.value[0].s,
      hashRange: [range.shardminvalue, range.shardmaxvalue],
      onPort: range.port,
      events: (await q(port, INPLACE, 'SELECT count(*)::int AS n FROM events WHERE team_id = $1', [large]))[0]
        .n,
    };
  } catch (e) {
    result.isolate = { ok: false, error: e.message };
    log(`isolate_tenant_to_new_shard: ${e.message}`);
  }

  try {
    const rp = await timed('citus_create_restore_point', () =>
      q(
        port,
        INPLACE,
        `SELECT citus_create_restore_point('timing-' || to_char(now(), 'YYYYMMDDHH24MISS')) AS lsn`,
      ),
    );
    result.restorePoint = { ok: true, coordinatorLsn: rp.value[0].lsn, seconds: secs(rp.ms) };
  } catch (e) {
    result.restorePoint = { ok: false, error: e.message };
    log(`citus_create_restore_point: ${e.message}`);
  }

  if (extra) {
    try {
      await q(extra, 'postgres', `CREATE DATABASE ${INPLACE}`);
      await q(extra, INPLACE, 'CREATE EXTENSION citus');
      const add = await timed(`citus_add_node of the worker on ${extra}`, () =>
        q(port, INPLACE, 'SELECT citus_add_node($1, $2)', ['127.0.0.1', extra]),
      );
      const rebalance = await timed('citus_rebalance_start and citus_rebalance_wait', async () => {
        await q(port, INPLACE, `SELECT citus_rebalance_start(shard_transfer_mode => 'block_writes')`);
        await q(port, INPLACE, 'SELECT citus_rebalance_wait()');
      });
      result.addWorker = {
        ok: true,
        addNodeSeconds: secs(add.ms),
        rebalanceSeconds: secs(rebalance.ms),
        shardsPerNode: await q(
          port,
          INPLACE,
          `SELECT nodeport AS port, count(*)::int AS shards, pg_size_pretty(sum(shard_size)) AS size
             FROM citus_shards GROUP BY nodeport ORDER BY nodeport`,
        ),
        counts: await counts(INPLACE),
      };
    } catch (e) {
      result.addWorker = { ok: false, error: e.message };
      log(`add a worker and rebalance: ${e.message}`);
    }
  } else {
    result.addWorker = { ok: false, error: 'no third worker (start the cluster with CITUS_WORKERS=3)' };
    log(
      'add a worker: skipped — the cluster has no third worker (CITUS_WORKERS=3 npm run citus:up adds one)',
    );
  }

  // 4. Dump and restore (last: the slowest part).
  await citusDatabase(RESTORE, base);
  const schema = await timed('migrate and distribute an empty database', () =>
    cli(['database', 'distribute'], RESTORE),
  );
  await createPartitions(RESTORE);
  result.dumpRestore = { schemaSeconds: secs(schema.ms) };
  if (env.TIMING_RESTORE_WITH_TRIGGERS === '1') {
    // As a plain restore does it: every row fires its triggers (on Citus, per row on the workers).
    const withTriggers = await timed('pg_dump | psql into the distributed database, triggers on', () =>
      dumpInto(RESTORE),
    );
    result.dumpRestore.triggersOnSeconds = secs(withTriggers.ms);
    result.dumpRestore.triggersOnSecondsPerMillionRows = secs((withTriggers.ms * 1e6) / rows);
    result.dumpRestore.triggersOnCounts = await counts(RESTORE);
    await q(
      port,
      RESTORE,
      'TRUNCATE events, session_recordings, session_recording_counts, person_distinct_ids, persons, projects, organizations CASCADE',
    );
  }
  // The tables' triggers off for the copy (their effects are in the dumped rows), then the recordings' counts
  // rebuilt by one statement per co-located shard.
  const restore = await timed('pg_dump | psql into the distributed database, triggers off', () =>
    restoreTriggersOff(RESTORE),
  );
  await q(port, 'postgres', `CREATE DATABASE ${PLAIN_COPY}`);
  cli(['migrate'], PLAIN_COPY);
  await createPartitions(PLAIN_COPY);
  const plain = await timed('pg_dump | psql into a plain database, triggers off (for comparison)', () =>
    restoreTriggersOff(PLAIN_COPY),
  );
  Object.assign(result.dumpRestore, {
    dataSeconds: secs(restore.ms),
    secondsPerMillionRows: secs((restore.ms * 1e6) / rows),
    plainDataSeconds: secs(plain.ms),
    plainSecondsPerMillionRows: secs((plain.ms * 1e6) / rows),
    counts: await counts(RESTORE),
    plainCounts: await counts(PLAIN_COPY),
  });

  result.finishedAt = new Date().toISOString();
  result.machine.loadAverageAtEnd = loadavg().map((l) => +l.toFixed(2));
  const out = env.TIMING_OUT || join(root, 'bench', 'results', `${result.date}-citus-operations.json`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
  console.log(JSON.stringify(result, null, 2));
  if (env.TIMING_KEEP !== '1') {
    for (const db of [INPLACE, RESTORE]) await dropEverywhere(db, all);
    for (const db of [SRC, PLAIN_COPY])
      await q(port, 'postgres', `DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  }
  log(`results: ${out}`);
}

main().catch((e) => {
  console.error(`citus-timing: ${e.stack || e.message}`);
  process.exit(1);
});
