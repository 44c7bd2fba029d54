import type pg from 'pg';
import type { DeliveryContext } from './destination.js';
import { ident } from './postgres-sql.js';

/** Most staging tables of a destination table one attempt's sweep looks at. */
const SWEEP_MAX_TABLES = 1000;

/**
 * Redshift: drops the staging tables of a destination table (`<prefix><run>_<attempt>`, or `<prefix><run>` as
 * they were named before) left behind by attempts that could not drop their own (a killed worker, a lost
 * destination, a failed drop): those of this run's earlier attempts, and those of the project's runs that have
 * ended. Tables of runs still going, or of runs this service does not know (another project, another service),
 * are left alone. Each drop is an INFO line of the run; a failed one a WARNING, without failing the attempt.
 * Listing the tables may throw (the caller classifies it).
 */
export async function sweepStagingTables(
  client: pg.Client,
  ctx: DeliveryContext,
  schema: string,
  prefix: string,
): Promise<void> {
  const pattern = `${prefix.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  const { rows } = await client.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_name LIKE $2
      ORDER BY table_name LIMIT ${SWEEP_MAX_TABLES}`,
    [schema, pattern],
  );
  const own = ctx.runId.replace(/-/g, '').slice(-16);
  const found = rows.flatMap(({ table_name: name }) => {
    const match = /^([0-9a-f]{16})(?:_(\d+))?$/.exec(name.slice(prefix.length));
    return match ? [{ name, run: match[1], attempt: match[2] === undefined ? 0 : Number(match[2]) }] : [];
  });
  const others = [...new Set(found.filter((f) => f.run !== own).map((f) => f.run))];
  const ended = others.length ? await ctx.endedRuns(others) : new Set<string>();
  for (const stale of found) {
    const earlier = stale.run === own && stale.attempt < ctx.attempt;
    if (!earlier && !ended.has(stale.run)) continue;
    const table = `${ident(schema)}.${ident(stale.name)}`;
    try {
      await client.query(`DROP TABLE IF EXISTS ${table}`);
      await ctx.log(
        'INFO',
        `Dropped the staging table ${table}, left by ${earlier ? 'an earlier attempt of this run' : 'an ended run'}.`,
      );
    } catch (err) {
      await ctx.log(
        'WARNING',
        `The staging table ${table}, left by an ended attempt, could not be dropped: ${(err as Error).message}. ` +
          'It can be dropped by hand.',
      );
    }
  }
}
