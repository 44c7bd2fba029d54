/**
 * The schema on a Citus cluster (`database distribute`): which table goes where, and the one-time conversion of a
 * migrated database. Every request carries a project (`team_id`), so the tables that grow with a project's data are
 * distributed by `team_id` and co-located (a project's rows of all of them on one worker, joined there); the small
 * tables every request reads are reference tables (a copy on every node); the job queue (schema `pgboss`), the
 * migrations table and the recording chunk buffer stay local to the coordinator.
 *
 * Citus needs every unique key and every foreign key between distributed tables to include `team_id`. The schema
 * of plain PostgreSQL keys some tables by a serial `id` alone; the conversion rewrites those keys under the same
 * constraint and index names (so later migrations that name them still apply): `PRIMARY KEY (id)` becomes
 * `PRIMARY KEY (team_id, id)`, `UNIQUE (uuid)` becomes `UNIQUE (team_id, uuid)`, and a foreign key such as
 * `(person_id) REFERENCES persons (id)` becomes `(team_id, person_id) REFERENCES persons (team_id, id)`. The
 * values stay unique as before (they come from sequences or random tokens); only the index carries one more column.
 */
import { installCitusWriteXid } from './citus-write-xid.js';

/** Tables distributed by `team_id`, co-located with the first (the anchor of the co-location group). */
export const DISTRIBUTED_TABLES = [
  'session_recordings',
  'session_recording_counts',
  'session_recording_snapshots',
  'session_recording_event_keys',
  'session_recording_keys',
  'session_recording_views',
  'session_recording_sharing',
  'session_recording_playlists',
  'session_recording_playlist_items',
  'persons',
  'person_distinct_ids',
  'events',
] as const;

/**
 * Tables that have a `team_id` column but are reference tables, and why. Each is small (configuration, a few rows
 * per project) and read across the projects of an organization; each has tables that hang off it without a
 * `team_id` of their own, which Citus cannot co-locate.
 */
export const REFERENCE_TABLES_WITH_TEAM_ID: Record<string, string> = {
  batch_exports:
    'a few per project, read by the scheduler across projects; its runs, backfills, logs and pauses have no team_id',
  file_exports: 'a few per project and day, read by project and by id (the file export worker)',
  access_controls: 'a few per project, read for a member across the projects of an organization',
  recording_access_rules: 'a few per project; its role links (recording_access_rule_roles) have no team_id',
  plugin_configs: 'one per project and plugin, read across projects by the plugin catalog',
  session_recording_sharing_tokens:
    'one row per sharing token issued; read by the token alone (the public shared-link route) to find the project ' +
    'whose shard holds the sharing',
  activity_logs:
    'organization-wide entries have no team_id (null), which a distributed table cannot hold; read by project ' +
    'and by organization',
};

/** Reference tables without a `team_id`: organizations, users, keys, projects and the other small tables. */
export const REFERENCE_TABLES = [
  'organizations',
  'users',
  'projects',
  'organization_memberships',
  'organization_domains',
  'organization_invites',
  'membership_project_access',
  'personal_api_keys',
  'project_secret_api_keys',
  'service_accounts',
  'roles',
  'role_memberships',
  'plugins',
  'plugin_source_files',
  'plugin_activities',
  'batch_export_backfills',
  'batch_export_runs',
  'batch_export_logs',
  'batch_export_pauses',
  'recording_access_rule_roles',
  'scim_identities',
  'scim_request_logs',
  ...Object.keys(REFERENCE_TABLES_WITH_TEAM_ID),
] as const;

/**
 * Tables of schema `public` that stay local to the coordinator: TypeORM's migrations, and the buffer of recording
 * chunks waiting to be packed (hourly partitions keyed by snapshot, no team_id; read and emptied by the packer).
 * The job queue's schema (`pgboss`) stays local too.
 */
export const LOCAL_TABLES = ['migrations', 'session_recording_chunk_buffer'] as const;

/** The distribution column. */
export const DISTRIBUTION_COLUMN = 'team_id';

export type Query = (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** What is wrong with the classification of the current schema (empty when every table is placed). */
export async function unclassifiedTables(query: Query): Promise<string[]> {
  const known = new Set<string>([...DISTRIBUTED_TABLES, ...REFERENCE_TABLES, ...LOCAL_TABLES]);
  const rows = await query(
    `SELECT c.relname AS name,
            EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = $1 AND NOT a.attisdropped)
              AS has_team
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition
      ORDER BY 1`,
    [DISTRIBUTION_COLUMN],
  );
  const problems: string[] = [];
  for (const r of rows) {
    const name = String(r.name);
    if (!known.has(name)) {
      problems.push(
        `${name} (${r.has_team ? 'has team_id: add it to DISTRIBUTED_TABLES' : 'no team_id: add it to REFERENCE_TABLES or LOCAL_TABLES'} in src/database/citus.ts)`,
      );
    }
  }
  return problems;
}

interface ForeignKey {
  table: string;
  name: string;
  referenced: string;
  definition: string;
  columns: string[];
}

/** Inserts the distribution column first in the column list that follows `head` (e.g. `PRIMARY KEY (`). */
function withTeamId(definition: string, head: RegExp): string {
  const m = head.exec(definition);
  if (!m) throw new Error(`cannot add ${DISTRIBUTION_COLUMN} to: ${definition}`);
  const at = m.index + m[0].length;
  return `${definition.slice(0, at)}${DISTRIBUTION_COLUMN}, ${definition.slice(at)}`;
}

/**
 * A foreign key between distributed tables rewritten to include the distribution column on both sides. `SET NULL`
 * and `SET DEFAULT` actions are limited to the key's own columns (PostgreSQL 15), so `team_id` is never cleared.
 */
export function colocatedForeignKey(definition: string): string {
  const m = /^FOREIGN KEY \(([^)]*)\) REFERENCES ([^(]+)\(([^)]*)\)(.*)$/s.exec(definition);
  if (!m) throw new Error(`unexpected foreign key: ${definition}`);
  const [, columns, target, referenced, rest] = m;
  const own = columns.split(',').map((c) => c.trim());
  if (own.includes(DISTRIBUTION_COLUMN)) return definition;
  const actions = rest.replace(
    /ON DELETE SET (NULL|DEFAULT)(?! \()/g,
    `ON DELETE SET $1 (${own.join(', ')})`,
  );
  return `FOREIGN KEY (${DISTRIBUTION_COLUMN}, ${columns}) REFERENCES ${target}(${DISTRIBUTION_COLUMN}, ${referenced})${actions}`;
}

/**
 * The trigger that stands for `fk` (ON DELETE SET NULL between distributed tables): after a row of the referenced
 * table is deleted, the referencing rows of the same project get NULL in the key's columns. Returns its name.
 */
async function setNullTrigger(query: Query, fk: ForeignKey): Promise<string> {
  const m = /REFERENCES [^(]+\(([^)]*)\)/.exec(fk.definition);
  if (!m) throw new Error(`unexpected foreign key: ${fk.definition}`);
  const referenced = m[1].split(',').map((c) => c.trim());
  const name = `${fk.referenced}_delete_sets_null_${fk.table}`.slice(0, 63);
  const set = fk.columns.map((c) => `${ident(c)} = NULL`).join(', ');
  const where = [
    `${ident(DISTRIBUTION_COLUMN)} = OLD.${ident(DISTRIBUTION_COLUMN)}`,
    ...fk.columns.map((c, i) => `${ident(c)} = OLD.${ident(referenced[i])}`),
  ].join(' AND ');
  await query(
    `CREATE OR REPLACE FUNCTION ${ident(name)}() RETURNS trigger LANGUAGE plpgsql AS $fn$
     BEGIN
       UPDATE ${ident(fk.table)} SET ${set} WHERE ${where};
       RETURN OLD;
     END $fn$`,
  );
  await query(
    `CREATE TRIGGER ${ident(name)} AFTER DELETE ON ${ident(fk.referenced)} FOR EACH ROW EXECUTE FUNCTION ${ident(name)}()`,
  );
  return `trigger ${name} (after delete on ${fk.referenced}: ${set} on ${fk.table})`;
}

/**
 * The live recordings count of a project (session_recording_counts), kept by row triggers on Citus instead of the
 * statement triggers with transition tables of plain PostgreSQL: one upsert per inserted or deleted recording, on
 * the worker holding the project's shards of both tables.
 */
async function rowLevelRecordingCounts(query: Query): Promise<void> {
  await query(`DROP TRIGGER IF EXISTS session_recordings_count_insert ON session_recordings`);
  await query(`DROP TRIGGER IF EXISTS session_recordings_count_delete ON session_recordings`);
  await query(
    `CREATE OR REPLACE FUNCTION session_recording_counts_on_insert_row() RETURNS trigger LANGUAGE plpgsql AS $fn$
     BEGIN
       IF NEW.deleted_at IS NULL THEN
         INSERT INTO session_recording_counts AS c (team_id, recordings) VALUES (NEW.team_id, 1)
         ON CONFLICT (team_id) DO UPDATE SET recordings = c.recordings + 1;
       END IF;
       RETURN NULL;
     END $fn$`,
  );
  await query(
    `CREATE OR REPLACE FUNCTION session_recording_counts_on_delete_row() RETURNS trigger LANGUAGE plpgsql AS $fn$
     BEGIN
       IF OLD.deleted_at IS NULL THEN
         UPDATE session_recording_counts SET recordings = recordings - 1 WHERE team_id = OLD.team_id;
       END IF;
       RETURN NULL;
     END $fn$`,
  );
  await query(
    `CREATE TRIGGER session_recordings_count_insert AFTER INSERT ON session_recordings
       FOR EACH ROW EXECUTE FUNCTION session_recording_counts_on_insert_row()`,
  );
  await query(
    `CREATE TRIGGER session_recordings_count_delete AFTER DELETE ON session_recordings
       FOR EACH ROW EXECUTE FUNCTION session_recording_counts_on_delete_row()`,
  );
}

export interface DistributeResult {
  reference: string[];
  distributed: string[];
  rewrittenKeys: string[];
  rewrittenForeignKeys: string[];
}

/**
 * Converts the migrated schema of the current database (the coordinator's) to Citus: reference tables, distributed
 * co-located tables, the keys rewritten. Idempotent: tables already converted are left alone, so it is run again
 * after an upgrade whose migrations created a table. Runs in one transaction: a failure leaves the schema as it was.
 */
export async function distributeSchema(run: Query, out: (line: string) => void): Promise<DistributeResult> {
  // An error names the statement that failed and PostgreSQL's detail (Citus explains its refusals there).
  const query: Query = async (sql, params) => {
    try {
      return await run(sql, params);
    } catch (e) {
      const { message, detail } = e as { message: string; detail?: string };
      const statement = sql.replace(/\s+/g, ' ').trim();
      throw new Error(
        `${message}${detail ? ` (${detail})` : ''}, in: ${statement}${params ? ` ${JSON.stringify(params)}` : ''}`,
        { cause: e },
      );
    }
  };
  const [ext] = await query(`SELECT extversion FROM pg_extension WHERE extname = 'citus'`);
  if (!ext) {
    throw new Error(
      'this database has no citus extension: CREATE EXTENSION citus in it on every node, register the workers ' +
        '(citus_set_coordinator_host, citus_add_node), then run again',
    );
  }
  const [{ nodes }] = await query(
    `SELECT count(*)::int AS nodes FROM pg_dist_node WHERE isactive AND noderole = 'primary' AND shouldhaveshards`,
  );
  if (!nodes) throw new Error('no Citus node can hold shards: add the workers (citus_add_node) first');
  const problems = await unclassifiedTables(query);
  if (problems.length) throw new Error(`tables not placed for Citus: ${problems.join('; ')}`);

  const converted = new Set(
    (await query(`SELECT logicalrelid::regclass::text AS name FROM pg_dist_partition`)).map((r) =>
      String(r.name).replace(/^public\.|"/g, ''),
    ),
  );
  const existing = new Set(
    (
      await query(
        `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition`,
      )
    ).map((r) => String(r.name)),
  );
  const pendingReference = REFERENCE_TABLES.filter((t) => existing.has(t) && !converted.has(t));
  const pendingDistributed = DISTRIBUTED_TABLES.filter((t) => existing.has(t) && !converted.has(t));
  const result: DistributeResult = {
    reference: [],
    distributed: [],
    rewrittenKeys: [],
    rewrittenForeignKeys: [],
  };
  if (!pendingReference.length && !pendingDistributed.length) {
    // A database distributed before the coordinator's transaction ids were carried to the workers gets the function.
    await installCitusWriteXid(query);
    return result;
  }
  const pending = new Set<string>([...pendingReference, ...pendingDistributed]);
  const distributed = new Set<string>(DISTRIBUTED_TABLES);

  await query('BEGIN');
  try {
    // DDL and distribution in one transaction must reach each worker over one connection.
    await query(`SET LOCAL citus.multi_shard_modify_mode TO 'sequential'`);
    // The triggers of persons, distinct ids and recordings (touch, export stamp, counts) run on the workers.
    await query('SET LOCAL citus.enable_unsafe_triggers TO on');
    // Their export stamp is the coordinator's transaction id (citus-write-xid.ts); rows copied to their shards keep
    // theirs (an insert without the setting keeps the row's value).
    await installCitusWriteXid(query);
    // The functions those triggers call (the activity log's masking helpers) exist on the workers before a table
    // is converted: converting a table that has rows copies them to its shards, which fires its triggers there, and
    // Citus creates a trigger's own function on the workers but not the functions its body calls.
    await query(
      `SELECT count(create_distributed_function(p.oid::regprocedure)) FROM pg_proc p
        WHERE p.pronamespace = 'public'::regnamespace AND p.prokind = 'f' AND p.prorettype <> 'trigger'::regtype
          AND NOT EXISTS (SELECT 1 FROM pg_depend d
                           WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
          AND NOT EXISTS (SELECT 1 FROM pg_dist_object o WHERE o.classid = 'pg_proc'::regclass AND o.objid = p.oid)`,
    );

    // 1. The foreign keys of (or to) the tables converted now are dropped, then added back once both sides are.
    const fks: ForeignKey[] = (
      await query(
        `SELECT conrelid::regclass::text AS table, conname AS name, confrelid::regclass::text AS referenced,
                pg_get_constraintdef(oid) AS definition,
                ARRAY(SELECT attname FROM pg_attribute WHERE attrelid = conrelid AND attnum = ANY (conkey))::text[]
                  AS columns
           FROM pg_constraint
          WHERE contype = 'f' AND connamespace = 'public'::regnamespace AND conparentid = 0`,
      )
    ).map((r) => ({
      table: String(r.table).replace(/"/g, ''),
      name: String(r.name),
      referenced: String(r.referenced).replace(/"/g, ''),
      definition: String(r.definition),
      columns: r.columns as string[],
    }));
    const touched = fks.filter((fk) => pending.has(fk.table) || pending.has(fk.referenced));
    for (const fk of touched) {
      if (!distributed.has(fk.table) && distributed.has(fk.referenced)) {
        throw new Error(
          `${fk.table} (not distributed) has a foreign key to ${fk.referenced} (distributed): ${fk.name}`,
        );
      }
      await query(`ALTER TABLE ${ident(fk.table)} DROP CONSTRAINT ${ident(fk.name)}`);
    }

    // 2. Unique keys of the tables distributed now (and of their partitions) get team_id first.
    for (const table of pendingDistributed) {
      const constraints = await query(
        `SELECT con.conrelid::regclass::text AS table, con.conname AS name, pg_get_constraintdef(con.oid) AS definition
           FROM pg_constraint con
          WHERE con.contype IN ('p', 'u') AND con.conparentid = 0
            AND (con.conrelid = $1::regclass
                 OR con.conrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = $1::regclass))
            AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = con.conrelid
                              AND a.attnum = ANY (con.conkey) AND a.attname = $2)`,
        [table, DISTRIBUTION_COLUMN],
      );
      for (const c of constraints) {
        const def = withTeamId(String(c.definition), /^(PRIMARY KEY|UNIQUE( NULLS NOT DISTINCT)?) \(/);
        await query(`ALTER TABLE ${c.table} DROP CONSTRAINT ${ident(String(c.name))}`);
        await query(`ALTER TABLE ${c.table} ADD CONSTRAINT ${ident(String(c.name))} ${def}`);
        result.rewrittenKeys.push(`${table}.${String(c.name)}: ${def}`);
      }
      const indexes = await query(
        `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS definition
           FROM pg_index i
          WHERE i.indisunique
            AND (i.indrelid = $1::regclass
                 OR i.indrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = $1::regclass))
            AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.indexrelid)
            AND NOT EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = i.indrelid
                              AND a.attnum = ANY (i.indkey) AND a.attname = $2)`,
        [table, DISTRIBUTION_COLUMN],
      );
      for (const ix of indexes) {
        const def = withTeamId(String(ix.definition), / USING \w+ \(/);
        await query(`DROP INDEX ${String(ix.name)}`);
        await query(def);
        result.rewrittenKeys.push(`${table}: ${def}`);
      }
    }

    // 3. Statement triggers with transition tables do not run on Citus shards (the shard's statement has no
    // tuplestore): those of the recordings' counts become row triggers under the same names.
    if (pending.has('session_recordings')) await rowLevelRecordingCounts(query);
    const transition = await query(
      `SELECT tgrelid::regclass::text AS table, tgname AS name FROM pg_trigger
        WHERE NOT tgisinternal AND (tgnewtable IS NOT NULL OR tgoldtable IS NOT NULL)
          AND tgrelid::regclass::text = ANY ($1::text[])`,
      [pendingDistributed],
    );
    if (transition.length) {
      throw new Error(
        `triggers with transition tables cannot run on Citus shards: ${transition.map((t) => `${String(t.name)} on ${String(t.table)}`).join(', ')} (make them row triggers in src/database/citus.ts)`,
      );
    }

    // 4. Reference tables, then distributed tables co-located with the anchor. A table that has rows (distributed
    // in place) has its triggers off while Citus copies them to its shards: the rows' effects (recording counts,
    // activity entries, export stamps) are in the database already, and the copy would fire them again on the
    // workers (counting every recording twice), or fail there on a table not converted yet.
    const withRows: string[] = [];
    for (const table of [...pendingReference, ...pendingDistributed]) {
      const [{ rows, triggers }] = await query(
        `SELECT EXISTS (SELECT 1 FROM ${ident(table)}) AS rows,
                EXISTS (SELECT 1 FROM pg_trigger WHERE tgrelid = $1::regclass AND NOT tgisinternal) AS triggers`,
        [table],
      );
      if (rows && triggers) withRows.push(table);
    }
    for (const table of withRows) await query(`ALTER TABLE ${ident(table)} DISABLE TRIGGER USER`);
    for (const table of pendingReference) {
      await query(`SELECT create_reference_table($1)`, [table]);
      result.reference.push(table);
    }
    const anchor = DISTRIBUTED_TABLES[0];
    for (const table of pendingDistributed) {
      await query(`SELECT create_distributed_table($1, $2, colocate_with => $3)`, [
        table,
        DISTRIBUTION_COLUMN,
        table === anchor ? 'none' : anchor,
      ]);
      result.distributed.push(table);
    }
    for (const table of withRows) await query(`ALTER TABLE ${ident(table)} ENABLE TRIGGER USER`);

    // 5. The foreign keys back: between distributed tables with team_id on both sides.
    for (const fk of touched) {
      const both = distributed.has(fk.table) && distributed.has(fk.referenced);
      const setNull = /ON DELETE SET NULL/.exec(fk.definition);
      if (both && setNull && !fk.columns.includes(DISTRIBUTION_COLUMN)) {
        // Citus refuses SET NULL on a key that includes the distribution column: a trigger on the referenced
        // table does it instead (on the worker holding both, the shards being co-located).
        const trigger = await setNullTrigger(query, fk);
        result.rewrittenForeignKeys.push(`${fk.table}.${fk.name}: replaced by ${trigger}`);
        continue;
      }
      const definition = both ? colocatedForeignKey(fk.definition) : fk.definition;
      await query(`ALTER TABLE ${ident(fk.table)} ADD CONSTRAINT ${ident(fk.name)} ${definition}`);
      if (definition !== fk.definition)
        result.rewrittenForeignKeys.push(`${fk.table}.${fk.name}: ${definition}`);
    }
    await query('COMMIT');
  } catch (e) {
    await query('ROLLBACK').catch(() => undefined);
    throw e;
  }
  for (const line of result.rewrittenKeys) out(`key: ${line}`);
  for (const line of result.rewrittenForeignKeys) out(`foreign key: ${line}`);
  return result;
}
