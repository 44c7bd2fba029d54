/**
 * The activity log's price on a write (`activity-log`): invite creation (`invite-create`, whose statements the
 * service and the baseline share, the log entry's INSERT among them) sent to the baseline as it is and without the
 * log entry (`?bench_activity_log=off`: the same statements but that INSERT), in the same run: the statements per
 * write, the time of a write sent alone and the writes per second under load, with and without the entry.
 */
import type pg from 'pg';
import { fetchOnce, runLoad, type RequestSpec } from './load.js';
import { quantile } from './scim.js';

type Load = Awaited<ReturnType<typeof runLoad>>;
import { profileStatements } from './statements.js';

export interface ActivityOverheadSide {
  statements: number;
  serialP50: number;
  rps: number;
  p50: number;
  p99: number;
}

export interface ActivityOverheadResult {
  write: string;
  logged: ActivityOverheadSide;
  unlogged: ActivityOverheadSide;
  /** The statements the entry adds per write (the log's INSERT), as pg_stat_statements counts them. */
  extraStatements: string[];
}

/** The extra statements and milliseconds per write, and the throughput ratio, of `result`. */
export function overheadFigures(result: ActivityOverheadResult): {
  extraStatements: number;
  extraSerialMs: number;
  rpsRatio: number;
} {
  const r = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;
  return {
    extraStatements: r(result.logged.statements - result.unlogged.statements),
    extraSerialMs: r(result.logged.serialP50 - result.unlogged.serialP50),
    rpsRatio: result.unlogged.rps > 0 ? r(result.logged.rps / result.unlogged.rps) : 0,
  };
}

export async function benchActivityOverhead(options: {
  db: pg.Client;
  baselineUrl: string;
  headers: Record<string, string>;
  organizationId: string;
  connections: number;
  durationSec: number;
  rounds: number;
  log: (m: string) => void;
}): Promise<ActivityOverheadResult> {
  const run = Date.now().toString(36);
  const spec = (logged: boolean, tag: string): RequestSpec => ({
    method: 'POST',
    path: `/api/organizations/${options.organizationId}/invites${logged ? '' : '?bench_activity_log=off'}`,
    body: (n) => ({
      target_email: `activity-${run}-${tag}-${logged ? 'on' : 'off'}-${n}@bench.example`,
      first_name: 'Bench',
    }),
  });
  // Statements per write on each side, then the serial latencies and the loads alternated between the two
  // (with, without, with, …), so the machine's load moves both alike.
  const unloggedSql = await profileStatements(
    options.db,
    options.baselineUrl,
    spec(false, 'sql'),
    options.headers,
    10,
  );
  const loggedSql = await profileStatements(
    options.db,
    options.baselineUrl,
    spec(true, 'sql'),
    options.headers,
    10,
  );
  const serial: Record<'on' | 'off', number[]> = { on: [], off: [] };
  for (let i = 0; i < 40; i++) {
    for (const logged of i % 2 ? [false, true] : [true, false]) {
      const started = performance.now();
      const res = await fetchOnce(options.baselineUrl, spec(logged, 'serial'), options.headers, i);
      if (res.status !== 201) throw new Error(`activity-log: ${res.status} ${res.body.slice(0, 300)}`);
      serial[logged ? 'on' : 'off'].push(performance.now() - started);
    }
  }
  const loads: Record<'on' | 'off', Load[]> = { on: [], off: [] };
  for (let r = 0; r < options.rounds * 2; r++) {
    const logged = r % 4 === 0 || r % 4 === 3;
    loads[logged ? 'on' : 'off'].push(
      await runLoad(
        options.baselineUrl,
        spec(logged, `r${r}`),
        options.headers,
        options.connections,
        options.durationSec,
      ),
    );
  }
  // Statements of the write itself: those sent at least every other request (not the service's background
  // statements on the same database, which pg_stat_statements counts too).
  const perWrite = (profile: typeof loggedSql) =>
    [...profile.byQuery.values()].filter((q) => q.calls >= 0.5).reduce((a, q) => a + q.calls, 0);
  const sideOf = (key: 'on' | 'off', profile: typeof loggedSql): ActivityOverheadSide => {
    const mean = (f: (s: Load) => number) => loads[key].reduce((a, s) => a + f(s), 0) / loads[key].length;
    return {
      statements: perWrite(profile),
      serialP50: quantile(serial[key], 0.5),
      rps: mean((s) => s.rps),
      p50: mean((s) => s.p50),
      p99: mean((s) => s.p99),
    };
  };
  const logged = { ...sideOf('on', loggedSql), byQuery: loggedSql.byQuery };
  const unlogged = { ...sideOf('off', unloggedSql), byQuery: unloggedSql.byQuery };
  const extraStatements = [...logged.byQuery]
    .filter(([id, q]) => q.calls >= 0.5 && !unlogged.byQuery.has(id))
    .map(([, q]) => `${q.calls}× ${q.query.slice(0, 120)}`);
  const strip = ({ byQuery: _, ...rest }: typeof logged) => rest;
  const result = {
    write: 'invite-create',
    logged: strip(logged),
    unlogged: strip(unlogged),
    extraStatements,
  };
  const f = overheadFigures(result);
  options.log(
    `activity-log: ${f.extraStatements} statement(s) and ${f.extraSerialMs} ms per write more with the entry; req/s ratio ${f.rpsRatio}`,
  );
  return result;
}

/** The comparison as a Markdown table. */
export function formatActivityOverheadTable(result: ActivityOverheadResult): string {
  const f = overheadFigures(result);
  const row = (name: string, s: ActivityOverheadSide) =>
    `| ${name} | ${Math.round(s.statements * 10) / 10} | ${Math.round(s.serialP50 * 10) / 10} | ${Math.round(s.rps)} | ${Math.round(s.p50 * 10) / 10} | ${Math.round(s.p99 * 10) / 10} |`;
  return [
    `| ${result.write} (baseline) | SQL/write | serial p50 ms | req/s | p50 ms | p99 ms |`,
    '| --- | --- | --- | --- | --- | --- |',
    row('with the activity log entry', result.logged),
    row('without it', result.unlogged),
    '',
    `The entry adds ${f.extraStatements} statement(s) per write (${result.extraStatements.join('; ') || 'none'}), ` +
      `${f.extraSerialMs} ms to a write sent alone, and leaves ${f.rpsRatio}× the writes per second.`,
  ].join('\n');
}
